#include "zpack.hpp"

#include <stdexcept>
#include <zlib.h>

namespace zpack {

std::vector<unsigned char> compress(const std::string &data, int level) {
  uLongf size = compressBound(data.size());
  std::vector<unsigned char> out(size);
  int rc = compress2(out.data(), &size, reinterpret_cast<const Bytef *>(data.data()),
                     data.size(), level);
  if (rc != Z_OK) throw std::runtime_error("compress2 failed");
  out.resize(size);
  return out;
}

std::string decompress(const std::vector<unsigned char> &packed, std::size_t size_hint) {
  std::size_t capacity = size_hint ? size_hint : packed.size() * 4 + 64;
  for (;;) {
    std::string out(capacity, '\0');
    uLongf size = capacity;
    int rc = uncompress(reinterpret_cast<Bytef *>(out.data()), &size, packed.data(),
                        packed.size());
    if (rc == Z_OK) {
      out.resize(size);
      return out;
    }
    if (rc != Z_BUF_ERROR) throw std::runtime_error("uncompress failed");
    capacity *= 2;
  }
}

std::uint32_t crc32(const std::string &data) {
  return static_cast<std::uint32_t>(
      ::crc32(0L, reinterpret_cast<const Bytef *>(data.data()), data.size()));
}

}  // namespace zpack
