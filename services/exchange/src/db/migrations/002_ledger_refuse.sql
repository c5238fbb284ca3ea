-- Lets one posting statement abort itself (SQLSTATE SVC01) when a guarded balance update matched no
-- row, so an entry is applied completely or not at all in a single round trip.
CREATE FUNCTION ledger_refuse(reason text) RETURNS integer LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION '%', reason USING ERRCODE = 'SVC01'; END $$;
