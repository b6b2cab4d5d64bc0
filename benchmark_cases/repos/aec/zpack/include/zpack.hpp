#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace zpack {
std::vector<unsigned char> compress(const std::string &data, int level = 6);
std::string decompress(const std::vector<unsigned char> &packed, std::size_t size_hint = 0);
std::uint32_t crc32(const std::string &data);
}  // namespace zpack
