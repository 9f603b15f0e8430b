-- The transfers workload's six tables and its marker (tf_meta: the parameters of the load, the
-- initial sum of balances that the money check compares with, and the load state).
CREATE TABLE tf_users (
    id bigint PRIMARY KEY,
    name varchar(40) NOT NULL,
    created_at timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE TABLE tf_tokens (
    token char(32) PRIMARY KEY,
    user_id bigint NOT NULL,
    expires_at timestamp NOT NULL
);
CREATE TABLE tf_accounts (
    id bigint PRIMARY KEY,
    user_id bigint NOT NULL,
    balance bigint NOT NULL,
    updated_at timestamp
);
CREATE INDEX tf_accounts_user ON tf_accounts (user_id);
CREATE TABLE tf_transfers (
    id bigserial PRIMARY KEY,
    from_account bigint NOT NULL,
    to_account bigint NOT NULL,
    amount bigint NOT NULL,
    user_id bigint NOT NULL,
    created_at timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE TABLE tf_audit (
    id bigserial PRIMARY KEY,
    transfer_id bigint NOT NULL,
    account_id bigint NOT NULL,
    amount bigint NOT NULL,
    created_at timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX tf_audit_transfer ON tf_audit (transfer_id);
CREATE INDEX tf_audit_account ON tf_audit (account_id);
CREATE TABLE tf_balance_history (
    id bigserial PRIMARY KEY,
    account_id bigint NOT NULL,
    transfer_id bigint NOT NULL,
    balance_before bigint NOT NULL,
    balance_after bigint NOT NULL,
    created_at timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX tf_history_account ON tf_balance_history (account_id);
CREATE TABLE tf_meta (
    version integer NOT NULL,
    users bigint NOT NULL,
    accounts_per_user integer NOT NULL,
    initial_balance bigint NOT NULL,
    initial_total bigint NOT NULL,
    token_seed varchar(32) NOT NULL,
    state varchar(16) NOT NULL
)
