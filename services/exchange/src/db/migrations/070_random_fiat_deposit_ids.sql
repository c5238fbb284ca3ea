-- Fiat deposit ids (the spec's deposit_id, the reference of the gateway's invoice) are random in
-- 1073741824..2147483647 (src/wallet/deposit-store.ts), so nobody can guess or enumerate them: the
-- gateway creates an invoice for an unsigned reference it has not seen (services/paygate README
-- "Unsigned invoices"). Crypto deposits keep the sequence, which stops below that range (an error at
-- the billionth crypto deposit rather than a collision); fiat deposits made before keep their ids.
ALTER SEQUENCE deposits_id_seq MAXVALUE 1073741823;
