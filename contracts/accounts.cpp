#include <gridledger/contracts/accounts.h>
#include <gridledger/crypto/sha256.h>

namespace gridledger::contracts {

Hash256 accountKey(const Address& address) {
    crypto::Sha256 h;
    h.update("gridledger/state/account").update(address.view());
    return h.finish();
}

Bytes encodeAccount(const Account& account) {
    Bytes out;
    appendU64(out, account.nonce);
    appendU128(out, account.balance);
    return out;
}

Result<Account> decodeAccount(ByteView bytes) {
    if (bytes.size() != 24) {
        return fail(ErrorCode::kCorrupt, "stored account is not 24 bytes");
    }
    GL_ASSIGN_OR_RETURN(balance, readU128(bytes.subspan(8)));
    return Account{readU64(bytes), balance};
}

Result<Account> loadAccount(const StateLayer& state, const Address& address) {
    return loadAccount(state, AccountSlot(address));
}

Result<Account> loadAccount(const StateLayer& state, const AccountSlot& slot) {
    GL_ASSIGN_OR_RETURN(value, state.get(slot.key));
    if (!value) {
        return Account{};
    }
    return decodeAccount(*value);
}

void storeAccount(StateLayer& state, const Address& address, const Account& account) {
    storeAccount(state, AccountSlot(address), account);
}

void storeAccount(StateLayer& state, const AccountSlot& slot, const Account& account) {
    state.put(slot.key, encodeAccount(account));
}

Status creditAccount(StateLayer& state, const Address& address, u128 amount) {
    if (amount == 0) {
        return {};
    }
    GL_ASSIGN_OR_RETURN(account, loadAccount(state, address));
    const auto balance = checkedAdd(account.balance, amount);
    if (!balance) {
        return fail(ErrorCode::kOverflow, "balance of " + address.hex() + " would overflow");
    }
    account.balance = *balance;
    storeAccount(state, address, account);
    return {};
}

Result<Account> readAccount(const ledger::StateTree& tree, std::uint64_t version,
                            const Address& address) {
    GL_ASSIGN_OR_RETURN(value, tree.get(accountKey(address), version));
    if (!value) {
        return Account{};
    }
    return decodeAccount(*value);
}

Result<codec::Event> executeTransfer(StateLayer& state, const AccountSlot& from,
                                     const codec::Transfer& transfer) {
    if (transfer.amount == 0) {
        return fail(ErrorCode::kZeroAmount, "transfer amount is zero");
    }
    if (transfer.to == from.address) {
        return fail(ErrorCode::kSelfTransfer, "transfer to the sender itself");
    }
    const AccountSlot to(transfer.to);
    GL_ASSIGN_OR_RETURN(sender, loadAccount(state, from));
    GL_ASSIGN_OR_RETURN(recipient, loadAccount(state, to));
    const auto debited = checkedSub(sender.balance, transfer.amount);
    if (!debited) {
        return fail(ErrorCode::kInsufficientBalance, "balance " + toDecimal(sender.balance) +
                                                         " < amount " + toDecimal(transfer.amount));
    }
    const auto credited = checkedAdd(recipient.balance, transfer.amount);
    if (!credited) {
        return fail(ErrorCode::kOverflow, "recipient balance would overflow");
    }
    // Nothing is written before this point: a failed transfer leaves the state as it was.
    sender.balance = *debited;
    recipient.balance = *credited;
    storeAccount(state, from, sender);
    storeAccount(state, to, recipient);
    return codec::Event{"transfer",
                        {{"from", from.address.hex()},
                         {"to", transfer.to.hex()},
                         {"amount", toDecimal(transfer.amount)}}};
}

}  // namespace gridledger::contracts
