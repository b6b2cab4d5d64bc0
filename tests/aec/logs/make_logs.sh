#!/usr/bin/env bash
# Regenerates the real logs of this folder (issue 46's three parser faults) by running go test
# and ctest on tiny projects, inside a Debian bookworm container (the harness's
# enconda/base:bookworm-py3.11-* image) with `apt-get install golang-go cmake g++ make`:
#   OUT=/out bash make_logs.sh
# Each scenario's stdout+stderr goes to <name>.log (go-big: gzipped) and its exit code to this
# script's stderr (copied by hand into README.md).
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="${OUT:-$HERE}"
WORK="${WORK:-/tmp/aec46}"

run() { # run NAME DIR CMD...
  local name=$1 dir=$2
  shift 2
  mkdir -p "$OUT"
  (cd "$dir" && "$@") >"$OUT/$name.log" 2>&1
  echo "$name exit=$?" >&2
}

gohead='import (\n\t"testing"\n\t"time"\n)\n\n'

# go-timeout: package a passes; package b's TestSlow sleeps past `-timeout 1s`, so the test
# binary panics ("panic: test timed out after 1s") and no `--- FAIL` line is ever printed.
rm -rf "$WORK/timeout"; mkdir -p "$WORK/timeout/a" "$WORK/timeout/b"
printf 'module example.com/tl\n\ngo 1.19\n' >"$WORK/timeout/go.mod"
printf 'package a\n\nfunc Add(x, y int) int { return x + y }\n' >"$WORK/timeout/a/a.go"
printf 'package a\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal("add")\n\t}\n}\n' >"$WORK/timeout/a/a_test.go"
printf 'package b\n\nfunc Mul(x, y int) int { return x * y }\n' >"$WORK/timeout/b/b.go"
printf "package b\n\n${gohead}func TestMul(t *testing.T) {\n\tif Mul(2, 3) != 6 {\n\t\tt.Fatal(\"mul\")\n\t}\n}\n\nfunc TestSlow(t *testing.T) {\n\ttime.Sleep(10 * time.Second)\n}\n" >"$WORK/timeout/b/b_test.go"
run go-timeout "$WORK/timeout" go test -count=1 -timeout 1s ./...
run go-timeout-v "$WORK/timeout" go test -v -count=1 -timeout 1s ./...

# go-big: `go test -v` on three packages: a and c each run 1,500 passing tests that log a line
# of 500 characters (about 0.9 MB of output each), b between them has one failing test, so its
# failure sits about 0.93 MB into a 1.8 MB log.
rm -rf "$WORK/big"; mkdir -p "$WORK/big/a" "$WORK/big/b" "$WORK/big/c"
printf 'module example.com/tl\n\ngo 1.19\n' >"$WORK/big/go.mod"
for p in a b c; do printf 'package %s\n\nfunc Add(x, y int) int { return x + y }\n' "$p" >"$WORK/big/$p/$p.go"; done
for p in a c; do
  {
    printf 'package %s\n\nimport (\n\t"strings"\n\t"testing"\n)\n\nvar line = strings.Repeat("x", 500)\n' "$p"
    for i in $(seq -w 1 1500); do
      printf '\nfunc TestAdd%s(t *testing.T) {\n\tt.Log(line)\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal("add")\n\t}\n}\n' "$i"
    done
  } >"$WORK/big/$p/${p}_test.go"
done
printf 'package b\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n\tif got := Add(2, 2); got != 5 {\n\t\tt.Fatalf("Add(2, 2) = %%d, want 5", got)\n\t}\n}\n' >"$WORK/big/b/b_test.go"
run go-big "$WORK/big" go test -v -count=1 ./...
gzip -9nf "$OUT/go-big.log"

# ctest-notrun: three tests, the second's command does not exist, so CTest reports it
# "***Not Run" and lists it among the failed tests.
rm -rf "$WORK/notrun"; mkdir -p "$WORK/notrun"
printf 'int main(void) { return 0; }\n' >"$WORK/notrun/ok.cpp"
printf 'cmake_minimum_required(VERSION 3.13)\nproject(tl CXX)\nenable_testing()\nadd_executable(ok ok.cpp)\nadd_test(NAME t_one COMMAND ok)\nadd_test(NAME t_missing COMMAND /nonexistent/program)\nadd_test(NAME t_three COMMAND ok)\n' >"$WORK/notrun/CMakeLists.txt"
run ctest-notrun "$WORK/notrun" bash -c 'cmake -S . -B build >/dev/null && cmake --build build && cd build && ctest'
