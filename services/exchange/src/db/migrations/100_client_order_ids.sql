-- A client's own id for an order (`client_order_id` of the order entry, issue 44), unique per account:
-- a client whose connection dropped before the answer asks for the order by it and learns the
-- outcome (POST /v3/auth/r/order/by-client-id, the feed's order.get). The id is reserved by its own
-- statement before the order reaches its market's writer (the primary key refuses a second use, on
-- every node of a cluster); the order's batch statement then sets `order_id`, in the same commit
-- as the order, and a refused order leaves its refusal here. A reservation with neither was never
-- placed (its process stopped before the batch) and stays used.
CREATE TABLE client_order_ids (
  account_id      integer NOT NULL REFERENCES accounts(id),
  client_order_id text NOT NULL,
  market          text NOT NULL,
  order_id        bigint UNIQUE,
  refused         text,
  created_at      bigint NOT NULL,
  PRIMARY KEY (account_id, client_order_id)
);
