#include "log_format.h"

#include <chrono>
#include <cstdio>
#include <ctime>

#include <spdlog/details/log_msg.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace gridledger::node {

namespace {

bool isKeyStart(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

bool isKeyChar(char c) {
    return isKeyStart(c) || (c >= '0' && c <= '9') || c == '.';
}

/** The key of a "key=value" token, or empty when the token is not one. */
std::string_view keyOf(std::string_view token) {
    const auto equals = token.find('=');
    if (equals == 0 || equals == std::string_view::npos || !isKeyStart(token[0])) {
        return {};
    }
    for (std::size_t i = 1; i < equals; ++i) {
        if (!isKeyChar(token[i])) {
            return {};
        }
    }
    return token.substr(0, equals);
}

/** "2026-01-02T03:04:05.678Z" */
std::string utcTime(std::chrono::system_clock::time_point time) {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch());
    const std::time_t seconds = static_cast<std::time_t>(ms.count() / 1000);
    std::tm utc{};
    ::gmtime_r(&seconds, &utc);
    char text[64];
    std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900,
                  utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                  static_cast<int>(ms.count() % 1000));
    return text;
}

}  // namespace

LogFields splitLogFields(std::string_view payload) {
    LogFields out;
    std::size_t pos = 0;
    bool inFields = false;
    while (pos < payload.size()) {
        const auto end = std::min(payload.find(' ', pos), payload.size());
        const std::string_view token = payload.substr(pos, end - pos);
        const std::string_view key = keyOf(token);
        if (!key.empty()) {
            inFields = true;
            out.fields.emplace_back(std::string(key), std::string(token.substr(key.size() + 1)));
        } else if (inFields) {
            out.fields.back().second += " ";
            out.fields.back().second += token;
        } else {
            out.message += (out.message.empty() || token.empty() ? "" : " ");
            out.message += token;
        }
        pos = end + 1;
    }
    return out;
}

std::string jsonQuoted(std::string_view text) {
    std::string out = "\"";
    for (const char c : text) {
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\t':
                out += "\\t";
                break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    char escaped[8];
                    std::snprintf(escaped, sizeof escaped, "\\u%04x",
                                  static_cast<unsigned>(static_cast<unsigned char>(c)));
                    out += escaped;
                } else {
                    out += c;
                }
        }
    }
    out += '"';
    return out;
}

void JsonLogFormatter::format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) {
    const LogFields parts =
        splitLogFields(std::string_view(msg.payload.data(), msg.payload.size()));
    const auto level = spdlog::level::to_string_view(msg.level);
    std::string line =
        "{\"time\":" + jsonQuoted(utcTime(msg.time)) +
        ",\"level\":" + jsonQuoted(std::string_view(level.data(), level.size())) +
        ",\"component\":" +
        jsonQuoted(std::string_view(msg.logger_name.data(), msg.logger_name.size())) +
        ",\"message\":" + jsonQuoted(parts.message) + ",\"fields\":{";
    for (std::size_t i = 0; i < parts.fields.size(); ++i) {
        line += (i == 0 ? "" : ",") + jsonQuoted(parts.fields[i].first) + ":" +
                jsonQuoted(parts.fields[i].second);
    }
    line += "}}\n";
    dest.append(line.data(), line.data() + line.size());
}

std::unique_ptr<spdlog::formatter> JsonLogFormatter::clone() const {
    return std::make_unique<JsonLogFormatter>();
}

std::shared_ptr<spdlog::logger> makeLogger(const std::string& name, const std::string& level,
                                           std::string_view format) {
    auto logger = spdlog::get(name);
    if (!logger) {
        logger = spdlog::stderr_color_mt(name);
    }
    logger->set_level(spdlog::level::from_str(level));
    if (format == "json") {
        logger->set_formatter(std::make_unique<JsonLogFormatter>());
    }
    return logger;
}

}  // namespace gridledger::node
