#pragma once

// Key files at rest: the encrypted key file format (docs/operations.md, "Key files"), where the
// passphrase comes from, and how secret files are written and read safely.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include <sys/types.h>

#include <gridledger/base/result.h>
#include <gridledger/crypto/sealed_box.h>

namespace gridledger::node {

/** Version of the encrypted key file format this build writes and reads. */
inline constexpr int kKeyFileVersion = 1;
/** The environment variable the CLI commands read a passphrase from. */
inline constexpr std::string_view kPassphraseEnv = "GRIDLEDGER_KEY_PASSPHRASE";

/** What a key file holds; bound into the encryption so that one cannot pass for the other. */
enum class KeyKind { kAccount, kNode };

/** The clear part of a key file: which key it is, whether it is encrypted, its public key. */
struct KeyFileInfo {
    bool encrypted = false;
    /** 0x hex of the public key; for a plain file, empty (it is derived from the secret). */
    std::string publicKey;
};

/** Where a passphrase comes from, in the order tried: file, environment variable, terminal. */
struct PassphraseSource {
    /** Read whole; one trailing newline (\n or \r\n) is dropped. */
    std::filesystem::path file;
    /** Names an environment variable that holds the passphrase. */
    std::string envVar;
    /** Ask on the terminal (without echo) when standard input is one. */
    bool prompt = false;
    /** Appended to the error when no source gives a passphrase: how to give one. */
    std::string hint;
};

/**
 * A passphrase read from its source on first use, then kept for the other keys of the same
 * command: a plain key never makes it ask.
 */
class Passphrase {
  public:
    /** No source: asking for the passphrase fails. */
    Passphrase() = default;
    explicit Passphrase(PassphraseSource source) : source_(std::move(source)) {}
    /** A passphrase already known (tests, and commands that read it before writing). */
    [[nodiscard]] static Passphrase of(std::string text);

    /**
     * The passphrase, read from the source the first time. `what` names what it is for in a
     * prompt or an error ("key 'validator'"); `confirm` asks twice at a prompt (new keys).
     */
    [[nodiscard]] Result<std::string> get(std::string_view what, bool confirm = false);

  private:
    PassphraseSource source_;
    std::optional<std::string> value_;
};

/** How a new key file is written: plain 0x hex unless a passphrase is given. */
struct KeyProtection {
    std::optional<std::string> passphrase;
    crypto::ScryptParams kdf;
};

/**
 * The text of a key file for `secret` (0x hex plain, or the JSON object of an encrypted file),
 * the key `name` of `kind` with public key `publicKeyHex`.
 */
[[nodiscard]] Result<std::string> encodeKeyFile(ByteView secret, KeyKind kind,
                                                const std::string& name,
                                                const std::string& publicKeyHex,
                                                const KeyProtection& protection);

/** Reads the clear part of a key file's text. Fails on an unknown version or malformed file. */
[[nodiscard]] Result<KeyFileInfo> inspectKeyFile(std::string_view text, const std::string& name);

/**
 * The secret of a key file's text, decrypting it with `passphrase` if it is encrypted. A wrong
 * passphrase (or an altered, renamed or re-kinded file) fails with kConfig "wrong passphrase for
 * key '<name>'"; nothing decrypted is returned unless it authenticates.
 */
[[nodiscard]] Result<Bytes> decodeKeyFile(std::string_view text, KeyKind kind,
                                          const std::string& name, Passphrase& passphrase);

/**
 * Writes a file atomically with exactly `mode`: a new temp file beside it, opened with
 * O_CREAT|O_EXCL|O_NOFOLLOW (never an existing file or link, never wider than `mode`), written,
 * fsynced, renamed over `path` and the directory fsynced. A link at `path` is replaced, not
 * followed. Creates missing parent directories with `dirMode`.
 */
[[nodiscard]] Status writeFileAtomically(const std::filesystem::path& path,
                                         std::string_view content, mode_t mode,
                                         mode_t dirMode = 0755);

/** The text of errno, for an error message after a failed system call. */
[[nodiscard]] std::string errnoText();

/** Fsyncs a directory, so that the names created or renamed in it are durable. */
[[nodiscard]] Status syncDirectory(const std::filesystem::path& dir);

/**
 * Reads a secret file, refusing a symbolic link or a file group or others may read or write,
 * with an error that names the file and the fix.
 */
[[nodiscard]] Result<std::string> readSecretFile(const std::filesystem::path& path);

}  // namespace gridledger::node
