#include "check.hpp"
#include "zpack.hpp"

int main() {
  auto packed = zpack::compress("");
  CHECK(!packed.empty());
  CHECK(zpack::decompress(packed).empty());
  return 0;
}
