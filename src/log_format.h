#pragma once

// The node's log lines as JSON ([log] format = json in node.conf): one object per line.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <spdlog/formatter.h>
#include <spdlog/logger.h>

namespace gridledger::node {

/** A log message taken apart: its text, then its key=value fields in order. */
struct LogFields {
    std::string message;
    std::vector<std::pair<std::string, std::string>> fields;
};

/**
 * Splits a message written in the project's style, "text key=value key=value": the text is what
 * precedes the first token of the form key=value (key: a letter or '_', then letters, digits,
 * '_' or '.'); a later token that is not key=value belongs to the value before it. Never fails:
 * a message without fields is all text.
 */
[[nodiscard]] LogFields splitLogFields(std::string_view payload);

/** `text` as a JSON string literal, quotes included. */
[[nodiscard]] std::string jsonQuoted(std::string_view text);

/**
 * Formats each record as one JSON object and a newline:
 * {"time":"2026-01-02T03:04:05.678Z","level":"info","component":"node","message":"...",
 *  "fields":{"height":"12",...}}. The time is UTC; field values are strings.
 */
class JsonLogFormatter final : public spdlog::formatter {
  public:
    void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override;
    [[nodiscard]] std::unique_ptr<spdlog::formatter> clone() const override;
};

/**
 * The logger `name` at `level` (spdlog's names: "info", "debug", ...), its lines as text or, for
 * `format` "json", as JsonLogFormatter writes them ([log] in node.conf); created on first use.
 */
[[nodiscard]] std::shared_ptr<spdlog::logger> makeLogger(const std::string& name,
                                                         const std::string& level,
                                                         std::string_view format);

}  // namespace gridledger::node
