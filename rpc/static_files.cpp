#include <algorithm>
#include <array>
#include <cctype>
#include <fstream>
#include <iterator>
#include <optional>
#include <system_error>
#include <utility>

#include <gridledger/rpc/static_files.h>

namespace gridledger::rpc {
namespace {

namespace fs = std::filesystem;

struct ContentType {
    std::string_view extension;
    std::string_view type;
};

constexpr std::array<ContentType, 11> kContentTypes = {{
    {".html", "text/html; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".mjs", "text/javascript; charset=utf-8"},
    {".json", "application/json"},
    {".map", "application/json"},
    {".svg", "image/svg+xml"},
    {".png", "image/png"},
    {".ico", "image/x-icon"},
    {".txt", "text/plain; charset=utf-8"},
    {".woff2", "font/woff2"},
}};

std::optional<unsigned char> hexDigit(char c) {
    if (c >= '0' && c <= '9') {
        return static_cast<unsigned char>(c - '0');
    }
    const char lower = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower >= 'a' && lower <= 'f') {
        return static_cast<unsigned char>(lower - 'a' + 10);
    }
    return std::nullopt;
}

/** One path segment with its percent escapes decoded; kInvalidArgument for a segment that could
 * leave the directory it is in, or that names a hidden file. */
Result<std::string> decodeSegment(std::string_view segment) {
    std::string out;
    out.reserve(segment.size());
    for (std::size_t i = 0; i < segment.size(); ++i) {
        if (segment[i] != '%') {
            out.push_back(segment[i]);
            continue;
        }
        const auto high = i + 2 < segment.size() ? hexDigit(segment[i + 1]) : std::nullopt;
        const auto low = i + 2 < segment.size() ? hexDigit(segment[i + 2]) : std::nullopt;
        if (!high || !low) {
            return fail(ErrorCode::kInvalidArgument, "malformed percent escape in the path");
        }
        out.push_back(static_cast<char>(*high * 16 + *low));
        i += 2;
    }
    if (out.empty() || out.front() == '.') {
        return fail(ErrorCode::kInvalidArgument, "an empty, dot or hidden segment in the path");
    }
    if (out.find_first_of(std::string_view("/\\\0", 3)) != std::string::npos) {
        return fail(ErrorCode::kInvalidArgument, "a slash, backslash or NUL inside a segment");
    }
    return out;
}

/** Whether `path` is `root` or lies below it; both canonical. */
bool isWithin(const fs::path& path, const fs::path& root) {
    const auto [rootEnd, pathAt] =
        std::mismatch(root.begin(), root.end(), path.begin(), path.end());
    (void)pathAt;
    return rootEnd == root.end();
}

}  // namespace

std::string_view contentTypeOf(const fs::path& file) {
    std::string extension = file.extension().string();
    std::transform(extension.begin(), extension.end(), extension.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    for (const ContentType& known : kContentTypes) {
        if (extension == known.extension) {
            return known.type;
        }
    }
    return "application/octet-stream";
}

Result<fs::path> resolveStaticPath(const fs::path& root, std::string_view relative) {
    fs::path path = root;
    for (;;) {
        const std::size_t slash = relative.find('/');
        const std::string_view segment = relative.substr(0, slash);
        if (slash == std::string_view::npos && segment.empty()) {
            path /= "index.html";  // The directory itself: "" or a trailing '/'.
            break;
        }
        GL_ASSIGN_OR_RETURN(decoded, decodeSegment(segment));
        path /= decoded;
        if (slash == std::string_view::npos) {
            break;
        }
        relative.remove_prefix(slash + 1);
    }
    std::error_code ec;
    const fs::path real = fs::canonical(path, ec);
    if (ec || !isWithin(real, root) || !fs::is_regular_file(real, ec)) {
        return fail(ErrorCode::kNotFound, "no such file");
    }
    return real;
}

Result<StaticFile> readStaticFile(const fs::path& root, std::string_view relative) {
    GL_ASSIGN_OR_RETURN(path, resolveStaticPath(root, relative));
    std::error_code ec;
    const std::uintmax_t size = fs::file_size(path, ec);
    if (ec) {
        return fail(ErrorCode::kIo, "cannot read " + path.filename().string());
    }
    if (size > kMaxStaticFileBytes) {
        return fail(ErrorCode::kTooLarge, path.filename().string() + " exceeds " +
                                              std::to_string(kMaxStaticFileBytes) + " bytes");
    }
    std::ifstream in(path, std::ios::binary);
    StaticFile file{std::string(std::istreambuf_iterator<char>(in), {}), contentTypeOf(path)};
    if (in.bad()) {
        return fail(ErrorCode::kIo, "cannot read " + path.filename().string());
    }
    return file;
}

}  // namespace gridledger::rpc
