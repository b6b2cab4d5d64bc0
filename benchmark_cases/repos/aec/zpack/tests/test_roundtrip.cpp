#include "check.hpp"
#include "zpack.hpp"

int main() {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "the quick brown fox ";
  auto packed = zpack::compress(text, 9);
  CHECK(packed.size() < text.size() / 10);
  CHECK(zpack::decompress(packed) == text);
  return 0;
}
