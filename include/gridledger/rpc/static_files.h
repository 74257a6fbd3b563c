#pragma once

// A directory of static files served read-only over HTTP (the explorer, docs/explorer.md).

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include <gridledger/base/result.h>

namespace gridledger::rpc {

/** The largest file a static site serves. */
inline constexpr std::uintmax_t kMaxStaticFileBytes = std::uintmax_t{16} << 20U;

/** A file of a static site, read whole, and the Content-Type it is served with. */
struct StaticFile {
    std::string body;
    std::string_view contentType;
};

/**
 * The Content-Type of a file by its extension, in any letter case: HTML, CSS, JavaScript, JSON,
 * source maps, SVG, PNG, ICO, plain text, WOFF2; `application/octet-stream` for any other.
 */
[[nodiscard]] std::string_view contentTypeOf(const std::filesystem::path& file);

/**
 * The file under `root` that `relative` names: the part of a request path after the site's
 * prefix, as it arrived (percent-encoded, without the query). An empty `relative`, or one that
 * ends with '/', names that directory's `index.html`.
 *
 * Requires `root` to be canonical (std::filesystem::canonical). Fails with kInvalidArgument when
 * a segment is empty, starts with '.' (so `.`, `..` and hidden files), holds a malformed percent
 * escape, or decodes to a '/', a '\\' or a NUL; with kNotFound when the file does not exist, is
 * not a regular file, or lies outside `root` once symbolic links are followed. Never names a file
 * outside `root`.
 */
[[nodiscard]] Result<std::filesystem::path> resolveStaticPath(const std::filesystem::path& root,
                                                              std::string_view relative);

/**
 * resolveStaticPath, then the file's bytes and Content-Type: kTooLarge above kMaxStaticFileBytes,
 * kIo when it cannot be read.
 */
[[nodiscard]] Result<StaticFile> readStaticFile(const std::filesystem::path& root,
                                                std::string_view relative);

}  // namespace gridledger::rpc
