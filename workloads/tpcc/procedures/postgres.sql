-- TPROC-C server-side transactions for PostgreSQL (stored-procedures=on): PL/pgSQL
-- functions, one call per transaction, in the caller's (autocommit) transaction.
-- Each runs the same statements as the client-side implementation in transactions.py
-- (PG_SQL there), so both modes leave the same effects. Named vs_* so a HammerDB schema's
-- own neword/payment/delivery/ostat/slev stay untouched.
-- An intended New-Order rollback (unused item id) raises SQLSTATE VS001; the caller counts
-- it as a rollback, not an error.

CREATE OR REPLACE FUNCTION vs_neword(p_w int, p_d int, p_c int, p_ol_cnt int, p_all_local int,
                                     p_items int[], p_supply int[], p_qty int[])
RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    v_o int; v_dtax numeric; v_disc numeric; v_last text; v_credit text; v_wtax numeric;
    v_n int;
BEGIN
    UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = p_w AND d_id = p_d
        RETURNING d_next_o_id - 1, d_tax INTO v_o, v_dtax;
    SELECT c_discount, c_last, c_credit, w_tax INTO v_disc, v_last, v_credit, v_wtax
        FROM customer, warehouse WHERE w_id = p_w AND c_w_id = p_w AND c_d_id = p_d AND c_id = p_c;
    SELECT count(*) INTO v_n FROM item WHERE i_id = ANY (p_items);
    IF v_n < p_ol_cnt THEN
        RAISE EXCEPTION 'Item number is not valid' USING ERRCODE = 'VS001';
    END IF;
    WITH v AS (SELECT * FROM unnest(p_items, p_supply, p_qty) WITH ORDINALITY AS v(i, sw, q, n)),
    s AS (UPDATE stock SET s_quantity = CASE WHEN s_quantity - v.q >= 10 THEN s_quantity - v.q
                                             ELSE s_quantity - v.q + 91 END,
                           s_ytd = s_ytd + v.q, s_order_cnt = s_order_cnt + 1,
                           s_remote_cnt = s_remote_cnt + CASE WHEN v.sw <> p_w THEN 1 ELSE 0 END
          FROM v WHERE s_i_id = v.i AND s_w_id = v.sw
          RETURNING s_i_id, s_w_id, s_quantity,
                    CASE p_d WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03
                             WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06
                             WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09
                             ELSE s_dist_10 END AS di)
    INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
                            ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
        SELECT v_o, p_d, p_w, v.n, v.i, v.sw, NULL, v.q, v.q * i.i_price, s.di
        FROM v JOIN item i ON i.i_id = v.i JOIN s ON s.s_i_id = v.i AND s.s_w_id = v.sw;
    INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt,
                        o_all_local)
        VALUES (v_o, p_d, p_w, p_c, now(), NULL, p_ol_cnt, p_all_local);
    INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (v_o, p_d, p_w);
    RETURN v_o;
END $$;

CREATE OR REPLACE FUNCTION vs_payment(p_w int, p_d int, p_cw int, p_cd int, p_c int,
                                      p_last text, p_amount numeric)
RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    v_ids int[]; v_c int; v_wname text; v_dname text; v_bal numeric;
BEGIN
    UPDATE warehouse SET w_ytd = w_ytd + p_amount WHERE w_id = p_w
        RETURNING w_name INTO v_wname;
    UPDATE district SET d_ytd = d_ytd + p_amount WHERE d_w_id = p_w AND d_id = p_d
        RETURNING d_name INTO v_dname;
    v_c := p_c;
    IF v_c = 0 THEN
        SELECT array_agg(c_id ORDER BY c_first) INTO v_ids FROM customer
            WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_last = p_last;
        v_c := v_ids[(array_length(v_ids, 1) + 1) / 2];
    END IF;
    UPDATE customer SET c_balance = c_balance - p_amount,
                        c_ytd_payment = c_ytd_payment + p_amount,
                        c_payment_cnt = c_payment_cnt + 1,
                        c_data = CASE WHEN c_credit = 'BC' THEN
                                     substr(c_id || ' ' || c_d_id || ' ' || c_w_id || ' ' || p_d
                                            || ' ' || p_w || ' ' || p_amount || ' | ' || c_data,
                                            1, 500)
                                 ELSE c_data END
        WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_c
        RETURNING c_balance INTO v_bal;
    INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
        SELECT v_c, p_cd, p_cw, p_d, p_w, now(), p_amount, w_name || '    ' || d_name
        FROM warehouse, district WHERE w_id = p_w AND d_w_id = p_w AND d_id = p_d;
    RETURN v_c;
END $$;

CREATE OR REPLACE FUNCTION vs_ostat(p_w int, p_d int, p_c int, p_last text)
RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    v_ids int[]; v_c int; v_o int; v_n int;
BEGIN
    v_c := p_c;
    IF v_c = 0 THEN
        SELECT array_agg(c_id ORDER BY c_first) INTO v_ids FROM customer
            WHERE c_w_id = p_w AND c_d_id = p_d AND c_last = p_last;
        v_c := v_ids[(array_length(v_ids, 1) + 1) / 2];
    END IF;
    PERFORM c_balance, c_first, c_middle, c_last FROM customer
        WHERE c_w_id = p_w AND c_d_id = p_d AND c_id = v_c;
    SELECT o_id INTO v_o FROM orders WHERE o_w_id = p_w AND o_d_id = p_d AND o_c_id = v_c
        ORDER BY o_id DESC LIMIT 1;
    SELECT count(*) INTO v_n FROM (
        SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line
        WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id = v_o) x;
    RETURN v_n;
END $$;

CREATE OR REPLACE FUNCTION vs_delivery(p_w int, p_carrier int)
RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    v_n int;
BEGIN
    WITH del AS (
        DELETE FROM new_order n
        USING (SELECT d, (SELECT min(no_o_id) FROM new_order
                          WHERE no_w_id = p_w AND no_d_id = d) AS o
               FROM generate_series(1, 10) AS d) m
        WHERE n.no_w_id = p_w AND n.no_d_id = m.d AND n.no_o_id = m.o
        RETURNING n.no_d_id AS d, n.no_o_id AS o),
    o AS (UPDATE orders SET o_carrier_id = p_carrier FROM del
          WHERE o_w_id = p_w AND o_d_id = del.d AND o_id = del.o RETURNING o_d_id, o_c_id),
    l AS (UPDATE order_line SET ol_delivery_d = now() FROM del
          WHERE ol_w_id = p_w AND ol_d_id = del.d AND ol_o_id = del.o
          RETURNING ol_d_id, ol_amount),
    s AS (SELECT ol_d_id, sum(ol_amount) AS a FROM l GROUP BY ol_d_id)
    UPDATE customer SET c_balance = c_balance + s.a, c_delivery_cnt = c_delivery_cnt + 1
        FROM o JOIN s ON s.ol_d_id = o.o_d_id
        WHERE c_w_id = p_w AND c_d_id = o.o_d_id AND c_id = o.o_c_id;
    GET DIAGNOSTICS v_n = ROW_COUNT;
    RETURN v_n;
END $$;

CREATE OR REPLACE FUNCTION vs_slev(p_w int, p_d int, p_threshold int)
RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    v_n int;
BEGIN
    SELECT count(DISTINCT s_i_id) INTO v_n FROM district, order_line, stock
        WHERE d_w_id = p_w AND d_id = p_d AND ol_w_id = p_w AND ol_d_id = p_d
          AND ol_o_id < d_next_o_id AND ol_o_id >= d_next_o_id - 20
          AND s_w_id = p_w AND s_i_id = ol_i_id AND s_quantity < p_threshold;
    RETURN v_n;
END $$;

CREATE OR REPLACE FUNCTION vs_tpcc_version() RETURNS int LANGUAGE sql IMMUTABLE AS $$
    SELECT 1
$$;
