#pragma once

#include <cstdint>

#include <gridledger/base/amount.h>
#include <gridledger/base/bytes.h>
#include <gridledger/codec/receipt.h>
#include <gridledger/codec/tx.h>
#include <gridledger/contracts/state.h>

namespace gridledger::contracts {

/** An account: the next nonce it must use and its DPS balance in base units. */
struct Account {
    std::uint64_t nonce = 0;
    u128 balance = 0;

    bool operator==(const Account&) const = default;
};

/** State key of an account: SHA-256("gridledger/state/account" ‖ address). */
[[nodiscard]] Hash256 accountKey(const Address& address);

/**
 * An address with its state key, hashed once: a transaction loads and stores its sender's account
 * (and a transfer its recipient's) more than once.
 */
struct AccountSlot {
    explicit AccountSlot(const Address& of) : address(of), key(accountKey(of)) {}

    Address address;
    Hash256 key;
};

[[nodiscard]] Bytes encodeAccount(const Account& account);
[[nodiscard]] Result<Account> decodeAccount(ByteView bytes);

/** The account at `address` (a zero account if absent). */
[[nodiscard]] Result<Account> loadAccount(const StateLayer& state, const Address& address);
[[nodiscard]] Result<Account> loadAccount(const StateLayer& state, const AccountSlot& slot);
void storeAccount(StateLayer& state, const Address& address, const Account& account);
void storeAccount(StateLayer& state, const AccountSlot& slot, const Account& account);

/**
 * Adds `amount` to the balance of `address` (nothing at all for 0, so that paying nothing never
 * creates an account). kOverflow beyond 128 bits, and then nothing is written.
 */
[[nodiscard]] Status creditAccount(StateLayer& state, const Address& address, u128 amount);

/** Reads an account from the committed tree at `version`. */
[[nodiscard]] Result<Account> readAccount(const ledger::StateTree& tree, std::uint64_t version,
                                          const Address& address);

/**
 * Executes a DPS transfer from `from` to `transfer.to` (the sender's nonce is handled by the
 * executor). Fails with kInsufficientBalance, kZeroAmount, kSelfTransfer or kOverflow and then
 * writes nothing, so the executor runs it without a layer of its own.
 */
[[nodiscard]] Result<codec::Event> executeTransfer(StateLayer& state, const AccountSlot& from,
                                                   const codec::Transfer& transfer);

}  // namespace gridledger::contracts
