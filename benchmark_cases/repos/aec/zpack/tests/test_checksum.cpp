#include "check.hpp"
#include "zpack.hpp"

int main() {
  CHECK(zpack::crc32("123456789") == 0xCBF43926u);
  CHECK(zpack::crc32("") == 0u);
  return 0;
}
