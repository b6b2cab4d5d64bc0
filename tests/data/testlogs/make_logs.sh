#!/usr/bin/env bash
# Regenerates the real test logs under this folder by running each runner on tiny projects.
#   bash make_logs.sh host       # pytest, unittest, cargo, node: the host's toolchains
#   bash make_logs.sh container  # go, ctest, junit4, junit5, maven, phpunit: run inside a Debian
#                                # bookworm container that has golang-go cmake g++ make php-cli
#                                # phpunit junit4 junit5 default-jdk-headless maven
#                                # libsurefire-java libmaven-*-plugin-java maven-debian-helper
#   bash make_logs.sh js         # jest, mocha: inside a Debian bookworm container that has
#                                # nodejs jest mocha (Debian's packages; no npm registry needed)
#   bash make_logs.sh automake   # make check: inside a Debian bookworm container that has
#                                # automake autoconf make gcc
# Each scenario's stdout+stderr goes to <runner>/<name>.log and its exit code to stderr of this
# script (copied by hand into expected.json, whose counts were read off the logs by a person).
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="${OUT:-$HERE}"
WORK="${WORK:-/tmp/aectl}"

run() { # run RUNNER NAME DIR CMD...
  local runner=$1 name=$2 dir=$3
  shift 3
  mkdir -p "$OUT/$runner"
  (cd "$dir" && "$@") >"$OUT/$runner/$name.log" 2>&1
  echo "$runner/$name exit=$?" >&2
}

host() {
  # pytest and unittest
  for s in pass fail error none skip; do rm -rf "$WORK/py/$s"; mkdir -p "$WORK/py/$s"; done
  printf 'def test_a():\n    assert 1\n\ndef test_b():\n    assert 2\n\ndef test_c():\n    assert 3\n' >"$WORK/py/pass/test_m.py"
  printf 'def test_a():\n    assert 1\n\ndef test_b():\n    assert 1 + 1 == 3\n\ndef test_c():\n    assert 3\n' >"$WORK/py/fail/test_m.py"
  printf 'import not_installed_module\n\ndef test_a():\n    assert 1\n' >"$WORK/py/error/test_m.py"
  printf 'def helper():\n    return 1\n' >"$WORK/py/none/test_m.py"
  printf 'import pytest\nimport unittest\n\ndef test_a():\n    assert 1\n\ndef test_b():\n    assert 2\n\n@pytest.mark.skip(reason="not on this platform")\ndef test_c():\n    assert 3\n' >"$WORK/py/skip/test_m.py"
  for s in pass fail error none skip; do
    run pytest "$s" "$WORK/py/$s" python3 -m pytest -p no:cacheprovider -p no:enconda test_m.py
  done
  for s in pass fail error none skip; do rm -rf "$WORK/ut/$s"; mkdir -p "$WORK/ut/$s"; done
  printf 'import unittest\n\nclass T(unittest.TestCase):\n    def test_a(self):\n        self.assertTrue(1)\n\n    def test_b(self):\n        self.assertTrue(2)\n\n    def test_c(self):\n        self.assertTrue(3)\n' >"$WORK/ut/pass/test_m.py"
  printf 'import unittest\n\nclass T(unittest.TestCase):\n    def test_a(self):\n        self.assertTrue(1)\n\n    def test_b(self):\n        self.assertEqual(1 + 1, 3)\n\n    def test_c(self):\n        raise RuntimeError("boom")\n\n    def test_d(self):\n        self.assertTrue(3)\n' >"$WORK/ut/fail/test_m.py"
  printf 'import unittest\nimport not_installed_module\n\nclass T(unittest.TestCase):\n    def test_a(self):\n        self.assertTrue(1)\n' >"$WORK/ut/error/test_m.py"
  printf 'def helper():\n    return 1\n' >"$WORK/ut/none/test_m.py"
  printf 'import unittest\n\nclass T(unittest.TestCase):\n    def test_a(self):\n        self.assertTrue(1)\n\n    def test_b(self):\n        self.assertTrue(2)\n\n    @unittest.skip("not on this platform")\n    def test_c(self):\n        self.assertTrue(3)\n' >"$WORK/ut/skip/test_m.py"
  for s in pass fail error none skip; do
    run unittest "$s" "$WORK/ut/$s" python3 -m unittest -v
  done

  # cargo: a library crate with unit tests, an integration test binary and doc tests
  for s in pass fail error none skip; do
    rm -rf "$WORK/rs/$s"; mkdir -p "$WORK/rs/$s/src" "$WORK/rs/$s/tests"
    printf '[package]\nname = "tl"\nversion = "0.1.0"\nedition = "2021"\n' >"$WORK/rs/$s/Cargo.toml"
  done
  unit='/// ```\n/// assert_eq!(tl::add(1, 1), 2);\n/// ```\npub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(super::add(2, 2), 4);\n    }\n\n    #[test]\n    fn adds_negative() {\n        assert_eq!(super::add(-2, 2), 0);\n    }\n}\n'
  printf "$unit" >"$WORK/rs/pass/src/lib.rs"
  printf '#[test]\nfn integration() {\n    assert_eq!(tl::add(3, 4), 7);\n}\n' >"$WORK/rs/pass/tests/it.rs"
  printf "$unit" >"$WORK/rs/fail/src/lib.rs"
  printf '#[test]\nfn integration() {\n    assert_eq!(tl::add(3, 4), 8);\n}\n\n#[test]\nfn integration_ok() {\n    assert_eq!(tl::add(3, 4), 7);\n}\n' >"$WORK/rs/fail/tests/it.rs"
  printf 'pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n' >"$WORK/rs/error/src/lib.rs"
  printf '#[test]\nfn integration() {\n    assert_eq!(tl::add(3, "4"), 7);\n}\n' >"$WORK/rs/error/tests/it.rs"
  printf 'pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n' >"$WORK/rs/none/src/lib.rs"
  rmdir "$WORK/rs/none/tests"
  printf "$unit" >"$WORK/rs/skip/src/lib.rs"
  printf '#[test]\nfn integration() {\n    assert_eq!(tl::add(3, 4), 7);\n}\n\n#[test]\n#[ignore]\nfn slow() {\n    assert_eq!(tl::add(3, 4), 7);\n}\n' >"$WORK/rs/skip/tests/it.rs"
  for s in pass fail error none skip; do
    run cargo "$s" "$WORK/rs/$s" cargo test --offline --color never
  done

  # node's built-in runner: TAP (its default when stdout is not a terminal) and spec
  for s in pass fail error none skip; do rm -rf "$WORK/js/$s"; mkdir -p "$WORK/js/$s/test"; done
  head='const test = require("node:test");\nconst assert = require("node:assert");\n'
  printf "${head}test(\"a\", () => assert.ok(1));\ntest(\"b\", () => assert.ok(2));\ntest(\"c\", () => assert.ok(3));\n" >"$WORK/js/pass/test/m.test.js"
  printf "${head}test(\"a\", () => assert.ok(1));\ntest(\"b\", () => assert.strictEqual(1 + 1, 3));\ntest(\"c\", () => assert.ok(3));\n" >"$WORK/js/fail/test/m.test.js"
  printf "${head}test(\"a\", () => assert.ok(1);\n" >"$WORK/js/error/test/m.test.js"
  printf 'module.exports = 1;\n' >"$WORK/js/none/test/m.test.js"
  printf "${head}test(\"a\", () => assert.ok(1));\ntest(\"b\", () => assert.ok(2));\ntest(\"c\", { skip: \"not here\" }, () => assert.ok(3));\n" >"$WORK/js/skip/test/m.test.js"
  for s in pass fail error none skip; do
    run node "$s" "$WORK/js/$s" node --test
  done
  run node fail-spec "$WORK/js/fail" node --test --test-reporter=spec
}

container() {
  # go: a module with two packages with tests and one without
  for s in pass fail error none skip; do
    rm -rf "$WORK/go/$s"; mkdir -p "$WORK/go/$s/a" "$WORK/go/$s/b" "$WORK/go/$s/c"
    printf 'module example.com/tl\n\ngo 1.19\n' >"$WORK/go/$s/go.mod"
    printf 'package a\n\nfunc Add(x, y int) int { return x + y }\n' >"$WORK/go/$s/a/a.go"
    printf 'package b\n\nfunc Mul(x, y int) int { return x * y }\n' >"$WORK/go/$s/b/b.go"
    printf 'package c\n\nfunc Neg(x int) int { return -x }\n' >"$WORK/go/$s/c/c.go"
  done
  gohead='import "testing"\n\n'
  for s in pass fail error skip; do
    printf "package a\n\n${gohead}func TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"add\")\n\t}\n}\n\nfunc TestAddZero(t *testing.T) {\n\tif Add(0, 0) != 0 {\n\t\tt.Fatal(\"zero\")\n\t}\n}\n" >"$WORK/go/$s/a/a_test.go"
    printf "package b\n\n${gohead}func TestMul(t *testing.T) {\n\tif Mul(2, 3) != 6 {\n\t\tt.Fatal(\"mul\")\n\t}\n}\n" >"$WORK/go/$s/b/b_test.go"
  done
  printf "package b\n\n${gohead}func TestMul(t *testing.T) {\n\tif Mul(2, 3) != 7 {\n\t\tt.Fatalf(\"Mul(2, 3) = %%d\", Mul(2, 3))\n\t}\n}\n\nfunc TestMulOne(t *testing.T) {\n\tif Mul(1, 3) != 3 {\n\t\tt.Fatal(\"one\")\n\t}\n}\n" >"$WORK/go/fail/b/b_test.go"
  printf "package b\n\n${gohead}func TestMul(t *testing.T) {\n\tif Mul(2, \"3\") != 6 {\n\t\tt.Fatal(\"mul\")\n\t}\n}\n" >"$WORK/go/error/b/b_test.go"
  printf "package b\n\n${gohead}func TestMul(t *testing.T) {\n\tif Mul(2, 3) != 6 {\n\t\tt.Fatal(\"mul\")\n\t}\n}\n\nfunc TestMulSlow(t *testing.T) {\n\tt.Skip(\"slow\")\n}\n" >"$WORK/go/skip/b/b_test.go"
  for s in pass fail error none skip; do
    run go "$s" "$WORK/go/$s" go test ./...
    run go "$s-v" "$WORK/go/$s" go test -v ./...
  done

  # ctest: a CMake project whose tests are small executables
  for s in pass fail error none skip; do
    rm -rf "$WORK/c/$s"; mkdir -p "$WORK/c/$s"
    printf 'int main(void) { return 0; }\n' >"$WORK/c/$s/ok.cpp"
    printf 'int main(void) { return 1; }\n' >"$WORK/c/$s/bad.cpp"
    printf 'int main(void) { return 77; }\n' >"$WORK/c/$s/skip.cpp"
    printf 'int main(void) { return undefined_name; }\n' >"$WORK/c/$s/broken.cpp"
  done
  cm='cmake_minimum_required(VERSION 3.13)\nproject(tl CXX)\nenable_testing()\n'
  printf "${cm}add_executable(ok ok.cpp)\nadd_test(NAME t_one COMMAND ok)\nadd_test(NAME t_two COMMAND ok)\nadd_test(NAME t_three COMMAND ok)\n" >"$WORK/c/pass/CMakeLists.txt"
  printf "${cm}add_executable(ok ok.cpp)\nadd_executable(bad bad.cpp)\nadd_test(NAME t_one COMMAND ok)\nadd_test(NAME t_two COMMAND bad)\nadd_test(NAME t_three COMMAND ok)\n" >"$WORK/c/fail/CMakeLists.txt"
  printf "${cm}add_executable(ok ok.cpp)\nadd_executable(broken broken.cpp)\nadd_test(NAME t_one COMMAND ok)\nadd_test(NAME t_two COMMAND broken)\n" >"$WORK/c/error/CMakeLists.txt"
  printf "${cm}add_executable(ok ok.cpp)\n" >"$WORK/c/none/CMakeLists.txt"
  printf "${cm}add_executable(ok ok.cpp)\nadd_executable(skip skip.cpp)\nadd_test(NAME t_one COMMAND ok)\nadd_test(NAME t_two COMMAND ok)\nadd_test(NAME t_three COMMAND skip)\nset_tests_properties(t_three PROPERTIES SKIP_RETURN_CODE 77)\n" >"$WORK/c/skip/CMakeLists.txt"
  for s in pass fail error none skip; do
    run ctest "$s" "$WORK/c/$s" bash -c 'cmake -S . -B build >/dev/null && cmake --build build && cd build && ctest'
  done

  # JUnit 4 (JUnitCore) and JUnit 5 (ConsoleLauncher) from Debian's jars
  J4=/usr/share/java/junit4.jar:/usr/share/java/hamcrest-core.jar
  J5=/usr/share/java/junit-platform-console-standalone.jar
  for s in pass fail error none skip; do rm -rf "$WORK/j4/$s" "$WORK/j5/$s"; mkdir -p "$WORK/j4/$s" "$WORK/j5/$s"; done
  j4h='import org.junit.Test;\nimport org.junit.Ignore;\nimport static org.junit.Assert.*;\n\npublic class CalcTest {\n'
  printf "${j4h}  @Test public void a() { assertEquals(2, 1 + 1); }\n  @Test public void b() { assertEquals(4, 2 + 2); }\n  @Test public void c() { assertTrue(true); }\n}\n" >"$WORK/j4/pass/CalcTest.java"
  printf "${j4h}  @Test public void a() { assertEquals(2, 1 + 1); }\n  @Test public void b() { assertEquals(5, 2 + 2); }\n  @Test public void c() { throw new IllegalStateException(\"boom\"); }\n  @Test public void d() { assertTrue(true); }\n}\n" >"$WORK/j4/fail/CalcTest.java"
  printf "${j4h}  @Test public void a() { assertEquals(2, 1 + \"1\"); }\n  @Test public void b() { int x = undefinedName; }\n}\n" >"$WORK/j4/error/CalcTest.java"
  printf "${j4h}  public void helper() { }\n}\n" >"$WORK/j4/none/CalcTest.java"
  printf "${j4h}  @Test public void a() { assertEquals(2, 1 + 1); }\n  @Test public void b() { assertEquals(4, 2 + 2); }\n  @Ignore(\"slow\") @Test public void c() { assertTrue(true); }\n}\n" >"$WORK/j4/skip/CalcTest.java"
  for s in pass fail error none skip; do
    run junit4 "$s" "$WORK/j4/$s" bash -c "javac -cp $J4 CalcTest.java && java -cp $J4:. org.junit.runner.JUnitCore CalcTest"
  done
  j5h='import org.junit.jupiter.api.Test;\nimport org.junit.jupiter.api.Disabled;\nimport static org.junit.jupiter.api.Assertions.*;\n\nclass CalcTest {\n'
  printf "${j5h}  @Test void a() { assertEquals(2, 1 + 1); }\n  @Test void b() { assertEquals(4, 2 + 2); }\n  @Test void c() { assertTrue(true); }\n}\n" >"$WORK/j5/pass/CalcTest.java"
  printf "${j5h}  @Test void a() { assertEquals(2, 1 + 1); }\n  @Test void b() { assertEquals(5, 2 + 2); }\n  @Test void c() { assertTrue(true); }\n}\n" >"$WORK/j5/fail/CalcTest.java"
  printf "${j5h}  @Test void a() { assertEquals(2, undefinedName); }\n}\n" >"$WORK/j5/error/CalcTest.java"
  printf "${j5h}  void helper() { }\n}\n" >"$WORK/j5/none/CalcTest.java"
  printf "${j5h}  @Test void a() { assertEquals(2, 1 + 1); }\n  @Test void b() { assertEquals(4, 2 + 2); }\n  @Disabled(\"slow\") @Test void c() { assertTrue(true); }\n}\n" >"$WORK/j5/skip/CalcTest.java"
  for s in pass fail error none skip; do
    run junit5 "$s" "$WORK/j5/$s" bash -c "javac -cp $J5 CalcTest.java && java -jar $J5 --disable-banner --disable-ansi-colors --details=tree -cp . --select-class CalcTest"
  done

  # Maven Surefire, offline against Debian's /usr/share/maven-repo (the plugin versions Debian ships)
  for s in pass fail error none skip; do
    rm -rf "$WORK/mvn/$s"; mkdir -p "$WORK/mvn/$s/src/main/java/tl" "$WORK/mvn/$s/src/test/java/tl"
    cat >"$WORK/mvn/$s/pom.xml" <<'EOF'
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>tl</groupId>
  <artifactId>tl</artifactId>
  <version>1.0</version>
  <properties>
    <maven.compiler.source>17</maven.compiler.source>
    <maven.compiler.target>17</maven.compiler.target>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
    <dependency><groupId>junit</groupId><artifactId>junit</artifactId><version>4.x</version><scope>test</scope></dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-resources-plugin</artifactId><version>3.3.0</version></plugin>
      <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-compiler-plugin</artifactId><version>3.10.1</version></plugin>
      <plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-surefire-plugin</artifactId><version>2.22.3</version></plugin>
    </plugins>
  </build>
</project>
EOF
    printf 'package tl;\n\npublic class Calc {\n  public static int add(int a, int b) { return a + b; }\n}\n' >"$WORK/mvn/$s/src/main/java/tl/Calc.java"
  done
  mh='package tl;\n\nimport org.junit.Test;\nimport org.junit.Ignore;\nimport static org.junit.Assert.*;\n\n'
  for s in pass fail skip; do
    printf "${mh}public class OtherTest {\n  @Test public void x() { assertEquals(3, Calc.add(1, 2)); }\n}\n" >"$WORK/mvn/$s/src/test/java/tl/OtherTest.java"
  done
  printf "${mh}public class CalcTest {\n  @Test public void a() { assertEquals(2, Calc.add(1, 1)); }\n  @Test public void b() { assertEquals(4, Calc.add(2, 2)); }\n}\n" >"$WORK/mvn/pass/src/test/java/tl/CalcTest.java"
  printf "${mh}public class CalcTest {\n  @Test public void a() { assertEquals(2, Calc.add(1, 1)); }\n  @Test public void b() { assertEquals(5, Calc.add(2, 2)); }\n  @Test public void c() { throw new IllegalStateException(\"boom\"); }\n}\n" >"$WORK/mvn/fail/src/test/java/tl/CalcTest.java"
  printf "${mh}public class CalcTest {\n  @Test public void a() { assertEquals(2, Calc.add(1, \"1\")); }\n}\n" >"$WORK/mvn/error/src/test/java/tl/CalcTest.java"
  printf "${mh}public class CalcTest {\n  @Test public void a() { assertEquals(2, Calc.add(1, 1)); }\n  @Ignore(\"slow\") @Test public void b() { assertEquals(4, Calc.add(2, 2)); }\n}\n" >"$WORK/mvn/skip/src/test/java/tl/CalcTest.java"
  for s in pass fail error none skip; do
    run maven "$s" "$WORK/mvn/$s" mvn -B -o -Dmaven.repo.local=/usr/share/maven-repo test
  done

  # PHPUnit 9 from Debian
  for s in pass fail error none skip; do rm -rf "$WORK/php/$s"; mkdir -p "$WORK/php/$s/tests"; done
  ph='<?php\nuse PHPUnit\\Framework\\TestCase;\n\nfinal class CalcTest extends TestCase\n{\n'
  printf "${ph}    public function testA(): void { \$this->assertSame(2, 1 + 1); }\n    public function testB(): void { \$this->assertSame(4, 2 + 2); }\n    public function testC(): void { \$this->assertTrue(true); }\n}\n" >"$WORK/php/pass/tests/CalcTest.php"
  printf "${ph}    public function testA(): void { \$this->assertSame(2, 1 + 1); }\n    public function testB(): void { \$this->assertSame(5, 2 + 2); }\n    public function testC(): void { throw new RuntimeException('boom'); }\n    public function testD(): void { \$this->assertTrue(true); }\n}\n" >"$WORK/php/fail/tests/CalcTest.php"
  printf "${ph}    public function testA(): void { \$this->assertSame(2, 1 + 1) }\n}\n" >"$WORK/php/error/tests/CalcTest.php"
  printf "${ph}    public function helper(): void { }\n}\n" >"$WORK/php/none/tests/CalcTest.php"
  printf "${ph}    public function testA(): void { \$this->assertSame(2, 1 + 1); }\n    public function testB(): void { \$this->assertSame(4, 2 + 2); }\n    public function testC(): void { \$this->markTestSkipped('not here'); }\n}\n" >"$WORK/php/skip/tests/CalcTest.php"
  for s in pass fail error none skip; do
    run phpunit "$s" "$WORK/php/$s" phpunit --colors=never tests
  done
}

js() {
  # Jest 29 (Debian's `jest`): a package.json marks the root; `sum.js` is the code under test.
  # `error` has one suite that loads and one with a syntax error; `error-many` has 20 that load
  # and one with a syntax error (past 20 suites Jest repeats failures in a recap); `none-empty` a
  # test file that declares no test; `skip` a skipped test and a todo. CI=true keeps Jest's
  # non-interactive output whatever the terminal.
  for s in pass fail error error-many none none-empty skip; do
    rm -rf "$WORK/jest/$s"; mkdir -p "$WORK/jest/$s/src"
    printf '{\n  "name": "tl",\n  "version": "1.0.0",\n  "private": true\n}\n' >"$WORK/jest/$s/package.json"
    printf 'function sum(a, b) {\n  return a + b;\n}\nmodule.exports = sum;\n' >"$WORK/jest/$s/src/sum.js"
  done
  jh="const sum = require('./sum');\n\n"
  printf "${jh}test('adds 1 + 2', () => {\n  expect(sum(1, 2)).toBe(3);\n});\n\ntest('adds 2 + 2', () => {\n  expect(sum(2, 2)).toBe(4);\n});\n\ntest('adds zero', () => {\n  expect(sum(0, 0)).toBe(0);\n});\n" >"$WORK/jest/pass/src/sum.test.js"
  printf "${jh}test('adds 1 + 2', () => {\n  expect(sum(1, 2)).toBe(3);\n});\n\ntest('adds 2 + 2 to equal 5', () => {\n  expect(sum(2, 2)).toBe(5);\n});\n\ntest('throws', () => {\n  throw new Error('boom');\n});\n\ntest('adds zero', () => {\n  expect(sum(0, 0)).toBe(0);\n});\n" >"$WORK/jest/fail/src/sum.test.js"
  printf "${jh}test('adds 1 + 2', () => {\n  expect(sum(1, 2)).toBe(3);\n});\n" >"$WORK/jest/error/src/ok.test.js"
  printf "${jh}test('adds 1 + 2', () => expect(sum(1, 2)).toBe(3);\n" >"$WORK/jest/error/src/sum.test.js"
  for i in $(seq 1 20); do
    printf "${jh}test('adds ${i}', () => {\n  expect(sum(${i}, 0)).toBe(${i});\n});\n" >"$WORK/jest/error-many/src/s${i}.test.js"
  done
  cp "$WORK/jest/error/src/sum.test.js" "$WORK/jest/error-many/src/sum.test.js"
  printf "${jh}function helper() {\n  return sum(1, 2);\n}\nmodule.exports = helper;\n" >"$WORK/jest/none-empty/src/sum.test.js"
  printf "${jh}test.skip('adds slowly', () => {\n  expect(sum(1, 2)).toBe(3);\n});\n\ntest('adds 2 + 2', () => {\n  expect(sum(2, 2)).toBe(4);\n});\n\ntest.todo('adds negatives');\n\ntest('adds zero', () => {\n  expect(sum(0, 0)).toBe(0);\n});\n" >"$WORK/jest/skip/src/sum.test.js"
  for s in pass fail error error-many none none-empty skip; do
    run jest "$s" "$WORK/jest/$s" env CI=true jest
  done

  # Mocha 10 (Debian's `mocha`), its default spec reporter on ./test. `none`: a test file that
  # declares no test; `none-nofiles`: no test file at all. `skip`: it.skip and a pending `it`.
  for s in pass fail error none skip; do
    rm -rf "$WORK/mocha/$s"; mkdir -p "$WORK/mocha/$s/test"
    printf 'function sum(a, b) {\n  return a + b;\n}\nmodule.exports = sum;\n' >"$WORK/mocha/$s/sum.js"
  done
  rm -rf "$WORK/mocha/none-nofiles"; mkdir -p "$WORK/mocha/none-nofiles"
  mh="const assert = require('assert');\nconst sum = require('../sum');\n\n"
  printf "${mh}describe('sum', () => {\n  it('adds 1 + 2', () => assert.strictEqual(sum(1, 2), 3));\n  it('adds 2 + 2', () => assert.strictEqual(sum(2, 2), 4));\n  it('adds zero', () => assert.strictEqual(sum(0, 0), 0));\n});\n" >"$WORK/mocha/pass/test/sum.test.js"
  printf "${mh}describe('sum', () => {\n  it('adds 1 + 2', () => assert.strictEqual(sum(1, 2), 3));\n  it('adds 2 + 2', () => assert.strictEqual(sum(2, 2), 5));\n  it('throws', () => {\n    throw new Error('boom');\n  });\n  it('adds zero', () => assert.strictEqual(sum(0, 0), 0));\n});\n" >"$WORK/mocha/fail/test/sum.test.js"
  printf "${mh}describe('sum', () => {\n  it('adds 1 + 2', () => assert.strictEqual(sum(1, 2), 3));\n});\n" >"$WORK/mocha/error/test/ok.test.js"
  printf "${mh}describe('sum', () => {\n  it('adds 1 + 2', () => assert.strictEqual(sum(1, 2), 3);\n});\n" >"$WORK/mocha/error/test/sum.test.js"
  printf "${mh}module.exports = () => sum(1, 2);\n" >"$WORK/mocha/none/test/sum.test.js"
  printf "${mh}describe('sum', () => {\n  it('adds 1 + 2', () => assert.strictEqual(sum(1, 2), 3));\n  it.skip('adds slowly', () => assert.strictEqual(sum(2, 2), 4));\n  it('adds negatives');\n  it('adds zero', () => assert.strictEqual(sum(0, 0), 0));\n});\n" >"$WORK/mocha/skip/test/sum.test.js"
  for s in pass fail error none skip none-nofiles; do
    run mocha "$s" "$WORK/mocha/$s" mocha
  done
}

automake() {
  # Automake's parallel test harness (`make check`): a C program and shell scripts as TESTS
  for s in pass fail error none skip; do
    rm -rf "$WORK/am/$s"; mkdir -p "$WORK/am/$s"
    printf 'AC_INIT([tl], [0.1])\nAM_INIT_AUTOMAKE([foreign])\nAC_PROG_CC\nAC_CONFIG_FILES([Makefile])\nAC_OUTPUT\n' >"$WORK/am/$s/configure.ac"
    printf '#!/bin/sh\nexit 0\n' >"$WORK/am/$s/ok.sh"
    printf '#!/bin/sh\necho "expected 4, got 5"\nexit 1\n' >"$WORK/am/$s/bad.sh"
    printf '#!/bin/sh\necho "no network here"\nexit 77\n' >"$WORK/am/$s/skip.sh"
    printf 'int main(void) { return 2 + 2 == 4 ? 0 : 1; }\n' >"$WORK/am/$s/sum.c"
    chmod +x "$WORK/am/$s"/*.sh
  done
  printf 'check_PROGRAMS = sum\nTESTS = sum ok.sh\nEXTRA_DIST = ok.sh bad.sh skip.sh\n' >"$WORK/am/pass/Makefile.am"
  printf 'check_PROGRAMS = sum\nTESTS = sum ok.sh bad.sh\n' >"$WORK/am/fail/Makefile.am"
  printf 'int main(void) { return undeclared_value; }\n' >"$WORK/am/error/sum.c"
  printf 'check_PROGRAMS = sum\nTESTS = sum ok.sh\n' >"$WORK/am/error/Makefile.am"
  printf 'check_PROGRAMS =\nTESTS =\n' >"$WORK/am/none/Makefile.am"
  # bad.sh is expected to fail (XFAIL), skip.sh exits 77 (SKIP)
  printf 'check_PROGRAMS = sum\nTESTS = sum ok.sh skip.sh bad.sh\nXFAIL_TESTS = bad.sh\n' >"$WORK/am/skip/Makefile.am"
  for s in pass fail error none skip; do
    (cd "$WORK/am/$s" && autoreconf -i >/dev/null 2>&1 && ./configure >/dev/null) || echo "automake/$s: configure failed" >&2
    run automake "$s" "$WORK/am/$s" make check
  done
}

"${1:?host, container, js or automake}"
