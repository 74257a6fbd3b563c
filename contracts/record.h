#pragma once

// Private to contracts/: the byte form of the records the system contracts keep in the state
// tree. Fixed-width big-endian integers, u32-length-prefixed strings, no padding: one value has
// exactly one encoding, so the state root depends on the values only. Every record starts with a
// format byte so that a later version can extend it.

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <gridledger/base/amount.h>
#include <gridledger/base/bytes.h>
#include <gridledger/base/result.h>
#include <gridledger/crypto/sha256.h>

namespace gridledger::contracts::detail {

/**
 * True iff `error` is the store failing (an I/O error or a damaged record): it aborts the block,
 * where any other error of a payload is that transaction's refusal.
 */
[[nodiscard]] inline bool isStorageError(const Error& error) {
    return error.code == ErrorCode::kStorage || error.code == ErrorCode::kCorrupt;
}

/** The state key of record `tag` for `id`: SHA-256(tag ‖ id). Tags are distinct constants. */
[[nodiscard]] inline Hash256 stateKey(std::string_view tag, ByteView id = {}) {
    crypto::Sha256 h;
    h.update(tag).update(id);
    return h.finish();
}

/** Appends the fields of a record. */
class RecordWriter {
  public:
    explicit RecordWriter(std::uint8_t format) { out_.push_back(format); }

    RecordWriter& u8(std::uint8_t v) {
        out_.push_back(v);
        return *this;
    }
    RecordWriter& boolean(bool v) { return u8(v ? 1 : 0); }
    RecordWriter& u32(std::uint32_t v) {
        appendU32(out_, v);
        return *this;
    }
    RecordWriter& u64(std::uint64_t v) {
        appendU64(out_, v);
        return *this;
    }
    RecordWriter& u128v(u128 v) {
        appendU128(out_, v);
        return *this;
    }
    RecordWriter& text(std::string_view v) {
        appendU32(out_, static_cast<std::uint32_t>(v.size()));
        append(out_, asBytes(v));
        return *this;
    }
    template <typename Fixed>
    RecordWriter& fixed(const Fixed& v) {
        append(out_, v.view());
        return *this;
    }
    /** A list: its length, then `item(writer, element)` for each element. */
    template <typename Range, typename Item>
    RecordWriter& list(const Range& items, Item item) {
        u32(static_cast<std::uint32_t>(items.size()));
        for (const auto& element : items) {
            item(*this, element);
        }
        return *this;
    }

    [[nodiscard]] Bytes take() { return std::move(out_); }

  private:
    Bytes out_;
};

/**
 * Reads the fields of a record. A read past the end (or a bad length) sets a sticky failure and
 * yields zeros; finish() reports it, and any trailing byte, as kCorrupt naming the record.
 */
class RecordReader {
  public:
    RecordReader(ByteView in, std::string_view what) : in_(in), what_(what) {}

    /** Reads the format byte; false (and failed) unless it is `expected`. */
    bool format(std::uint8_t expected) {
        if (u8() != expected) {
            failed_ = true;
        }
        return !failed_;
    }
    std::uint8_t u8() {
        if (!take(1)) {
            return 0;
        }
        return in_[pos_ - 1];
    }
    bool boolean() {
        const std::uint8_t v = u8();
        if (v > 1) {
            failed_ = true;
        }
        return v == 1;
    }
    std::uint32_t u32() { return take(4) ? readU32(in_.subspan(pos_ - 4)) : 0; }
    std::uint64_t u64() { return take(8) ? readU64(in_.subspan(pos_ - 8)) : 0; }
    u128 u128v() {
        if (!take(16)) {
            return 0;
        }
        return readU128(in_.subspan(pos_ - 16, 16)).value_or(0);
    }
    std::string text() {
        const std::uint32_t size = u32();
        if (!take(size)) {
            return {};
        }
        return toString(in_.subspan(pos_ - size, size));
    }
    template <typename Fixed>
    Fixed fixed() {
        if (!take(Fixed::kSize)) {
            return Fixed{};
        }
        return *Fixed::fromBytes(in_.subspan(pos_ - Fixed::kSize, Fixed::kSize));
    }
    /** Reads a list written by RecordWriter::list with `item(reader)` per element. */
    template <typename T, typename Item>
    std::vector<T> list(Item item) {
        const std::uint32_t count = u32();
        std::vector<T> out;
        // Each element takes at least one byte: a count beyond the rest is corrupt.
        if (count > in_.size() - pos_) {
            failed_ = true;
            return out;
        }
        out.reserve(count);
        for (std::uint32_t i = 0; i < count && !failed_; ++i) {
            out.push_back(item(*this));
        }
        return out;
    }

    /** kCorrupt if any read failed or bytes remain. */
    [[nodiscard]] Status finish() const {
        if (failed_ || pos_ != in_.size()) {
            return fail(ErrorCode::kCorrupt, "stored " + std::string(what_) + " is corrupt");
        }
        return {};
    }

  private:
    bool take(std::size_t n) {
        if (failed_ || n > in_.size() - pos_) {
            failed_ = true;
            return false;
        }
        pos_ += n;
        return true;
    }

    ByteView in_;
    std::string_view what_;
    std::size_t pos_ = 0;
    bool failed_ = false;
};

/** A sorted list of addresses: the lists only governance grows (verifiers, admitted providers). */
[[nodiscard]] inline Bytes encodeAddresses(const std::vector<Address>& addresses) {
    RecordWriter w(1);
    w.list(addresses, [](RecordWriter& out, const Address& a) { out.fixed(a); });
    return w.take();
}

[[nodiscard]] inline Result<std::vector<Address>> decodeAddresses(ByteView bytes,
                                                                  std::string_view what) {
    RecordReader r(bytes, what);
    r.format(1);
    auto out = r.list<Address>([](RecordReader& in) { return in.fixed<Address>(); });
    GL_TRY(r.finish());
    return out;
}

/** Inserts `a` keeping the list sorted; false if it was already there. */
inline bool insertSorted(std::vector<Address>& list, const Address& a) {
    const auto it = std::lower_bound(list.begin(), list.end(), a);
    if (it != list.end() && *it == a) {
        return false;
    }
    list.insert(it, a);
    return true;
}

/** Removes `a` from a sorted list; false if it was not there. */
inline bool eraseSorted(std::vector<Address>& list, const Address& a) {
    const auto it = std::lower_bound(list.begin(), list.end(), a);
    if (it == list.end() || *it != a) {
        return false;
    }
    list.erase(it);
    return true;
}

[[nodiscard]] inline bool containsSorted(const std::vector<Address>& list, const Address& a) {
    return std::binary_search(list.begin(), list.end(), a);
}

}  // namespace gridledger::contracts::detail
