-- TPROC-C server-side transactions for MySQL and MariaDB (stored-procedures=on): stored
-- procedures, one CALL per transaction, each with its own START TRANSACTION ... COMMIT.
-- They run the same statements as the client-side implementation in transactions.py
-- (MY_SQL there), so both modes leave the same effects. Named vs_* so a HammerDB schema's
-- NEWORD/PAYMENT/DELIVERY/OSTAT/SLEV stay untouched. Item lists arrive as comma-separated
-- strings. On an SQL error a procedure rolls back and re-raises it (one ROLLBACK per failed
-- attempt, as the client-side path sends); an intended New-Order rollback returns
-- rolled_back = 1. Statements are separated by lines holding only //.

DROP PROCEDURE IF EXISTS vs_neword
//
CREATE PROCEDURE vs_neword(p_w INT, p_d INT, p_c INT, p_ol_cnt INT, p_all_local INT,
                           p_items VARCHAR(200), p_supply VARCHAR(200), p_qty VARCHAR(100))
BEGIN
    DECLARE v_o, v_k, v_i, v_sw, v_q, v_sq, v_n INT;
    DECLARE v_dtax, v_disc, v_wtax, v_price DECIMAL(12, 4);
    DECLARE v_last VARCHAR(16);
    DECLARE v_credit CHAR(2);
    DECLARE v_dist CHAR(24);
    DECLARE v_sdata VARCHAR(50);
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
    START TRANSACTION;
    SELECT d_next_o_id, d_tax INTO v_o, v_dtax FROM district
        WHERE d_w_id = p_w AND d_id = p_d FOR UPDATE;
    UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = p_w AND d_id = p_d;
    SELECT c_discount, c_last, c_credit, w_tax INTO v_disc, v_last, v_credit, v_wtax
        FROM customer, warehouse
        WHERE w_id = p_w AND c_w_id = p_w AND c_d_id = p_d AND c_id = p_c;
    SET v_k = 1;
    SET v_n = 0;
    WHILE v_k <= p_ol_cnt DO
        SET v_i = CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(p_items, ',', v_k), ',', -1) AS SIGNED);
        SET v_price = NULL;
        SELECT i_price INTO v_price FROM item WHERE i_id = v_i;
        IF v_price IS NOT NULL THEN
            SET v_n = v_n + 1;
        END IF;
        SET v_k = v_k + 1;
    END WHILE;
    IF v_n < p_ol_cnt THEN
        ROLLBACK;
        SELECT v_o AS o_id, 1 AS rolled_back;
    ELSE
        SET v_k = 1;
        WHILE v_k <= p_ol_cnt DO
            SET v_i = CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(p_items, ',', v_k), ',', -1) AS SIGNED);
            SET v_sw = CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(p_supply, ',', v_k), ',', -1) AS SIGNED);
            SET v_q = CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(p_qty, ',', v_k), ',', -1) AS SIGNED);
            SELECT i_price INTO v_price FROM item WHERE i_id = v_i;
            SELECT s_quantity, CASE p_d WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02
                   WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05
                   WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08
                   WHEN 9 THEN s_dist_09 ELSE s_dist_10 END, s_data
                INTO v_sq, v_dist, v_sdata
                FROM stock WHERE s_w_id = v_sw AND s_i_id = v_i FOR UPDATE;
            UPDATE stock SET s_quantity = IF(v_sq - v_q >= 10, v_sq - v_q, v_sq - v_q + 91),
                             s_ytd = s_ytd + v_q, s_order_cnt = s_order_cnt + 1,
                             s_remote_cnt = s_remote_cnt + IF(v_sw <> p_w, 1, 0)
                WHERE s_w_id = v_sw AND s_i_id = v_i;
            INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id,
                                    ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount,
                                    ol_dist_info)
                VALUES (v_o, p_d, p_w, v_k, v_i, v_sw, NULL, v_q, v_q * v_price, v_dist);
            SET v_k = v_k + 1;
        END WHILE;
        INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt,
                            o_all_local)
            VALUES (v_o, p_d, p_w, p_c, NOW(), NULL, p_ol_cnt, p_all_local);
        INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (v_o, p_d, p_w);
        COMMIT;
        SELECT v_o AS o_id, 0 AS rolled_back;
    END IF;
END
//
DROP PROCEDURE IF EXISTS vs_payment
//
CREATE PROCEDURE vs_payment(p_w INT, p_d INT, p_cw INT, p_cd INT, p_c INT,
                            p_last VARCHAR(16), p_amount DECIMAL(6, 2))
BEGIN
    DECLARE v_c, v_n, v_off INT;
    DECLARE v_wname, v_dname VARCHAR(10);
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
    START TRANSACTION;
    UPDATE warehouse SET w_ytd = w_ytd + p_amount WHERE w_id = p_w;
    SELECT w_name INTO v_wname FROM warehouse WHERE w_id = p_w;
    UPDATE district SET d_ytd = d_ytd + p_amount WHERE d_w_id = p_w AND d_id = p_d;
    SELECT d_name INTO v_dname FROM district WHERE d_w_id = p_w AND d_id = p_d;
    SET v_c = p_c;
    IF v_c = 0 THEN
        SELECT COUNT(*) INTO v_n FROM customer
            WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_last = p_last;
        SET v_off = (v_n + 1) DIV 2 - 1;
        SELECT c_id INTO v_c FROM customer
            WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_last = p_last
            ORDER BY c_first LIMIT v_off, 1;
    END IF;
    UPDATE customer SET c_balance = c_balance - p_amount,
                        c_ytd_payment = c_ytd_payment + p_amount,
                        c_payment_cnt = c_payment_cnt + 1,
                        c_data = IF(c_credit = 'BC',
                                    LEFT(CONCAT(c_id, ' ', c_d_id, ' ', c_w_id, ' ', p_d, ' ',
                                                p_w, ' ', p_amount, ' | ', c_data), 500),
                                    c_data)
        WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_c;
    SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone,
           c_since, c_credit, c_credit_lim, c_discount, c_balance
        FROM customer WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_c;
    INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
        SELECT v_c, p_cd, p_cw, p_d, p_w, NOW(), p_amount, CONCAT(w_name, '    ', d_name)
        FROM warehouse, district WHERE w_id = p_w AND d_w_id = p_w AND d_id = p_d;
    COMMIT;
END
//
DROP PROCEDURE IF EXISTS vs_ostat
//
CREATE PROCEDURE vs_ostat(p_w INT, p_d INT, p_c INT, p_last VARCHAR(16))
BEGIN
    DECLARE v_c, v_n, v_off INT;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
    START TRANSACTION;
    SET v_c = p_c;
    IF v_c = 0 THEN
        SELECT COUNT(*) INTO v_n FROM customer
            WHERE c_w_id = p_w AND c_d_id = p_d AND c_last = p_last;
        SET v_off = (v_n + 1) DIV 2 - 1;
        SELECT c_id INTO v_c FROM customer
            WHERE c_w_id = p_w AND c_d_id = p_d AND c_last = p_last
            ORDER BY c_first LIMIT v_off, 1;
    END IF;
    SELECT c_balance, c_first, c_middle, c_last FROM customer
        WHERE c_w_id = p_w AND c_d_id = p_d AND c_id = v_c;
    SELECT o_id, o_carrier_id, o_entry_d FROM orders
        WHERE o_w_id = p_w AND o_d_id = p_d AND o_c_id = v_c ORDER BY o_id DESC LIMIT 1;
    SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line
        WHERE ol_w_id = p_w AND ol_d_id = p_d
          AND ol_o_id = (SELECT MAX(o_id) FROM orders
                         WHERE o_w_id = p_w AND o_d_id = p_d AND o_c_id = v_c);
    COMMIT;
END
//
DROP PROCEDURE IF EXISTS vs_delivery
//
CREATE PROCEDURE vs_delivery(p_w INT, p_carrier INT)
BEGIN
    DECLARE v_d, v_o, v_c INT;
    DECLARE CONTINUE HANDLER FOR NOT FOUND BEGIN END;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
    START TRANSACTION;
    SET v_d = 1;
    WHILE v_d <= 10 DO
        SET v_o = NULL, v_c = NULL;
        SELECT no_o_id INTO v_o FROM new_order WHERE no_w_id = p_w AND no_d_id = v_d
            ORDER BY no_o_id LIMIT 1 FOR UPDATE;
        DELETE FROM new_order WHERE no_w_id = p_w AND no_d_id = v_d AND no_o_id = v_o;
        SELECT o_c_id INTO v_c FROM orders WHERE o_w_id = p_w AND o_d_id = v_d AND o_id = v_o;
        UPDATE orders SET o_carrier_id = p_carrier
            WHERE o_w_id = p_w AND o_d_id = v_d AND o_id = v_o;
        UPDATE order_line SET ol_delivery_d = NOW()
            WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_o;
        UPDATE customer SET c_balance = c_balance + (
                   SELECT COALESCE(SUM(ol_amount), 0) FROM order_line
                   WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_o),
               c_delivery_cnt = c_delivery_cnt + 1
            WHERE c_w_id = p_w AND c_d_id = v_d AND c_id = v_c;
        SET v_d = v_d + 1;
    END WHILE;
    COMMIT;
END
//
DROP PROCEDURE IF EXISTS vs_slev
//
CREATE PROCEDURE vs_slev(p_w INT, p_d INT, p_threshold INT)
BEGIN
    DECLARE v_next INT;
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
    START TRANSACTION;
    SELECT d_next_o_id INTO v_next FROM district WHERE d_w_id = p_w AND d_id = p_d;
    SELECT COUNT(DISTINCT s_i_id) AS low_stock FROM order_line, stock
        WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id < v_next AND ol_o_id >= v_next - 20
          AND s_w_id = p_w AND s_i_id = ol_i_id AND s_quantity < p_threshold;
    COMMIT;
END
//
DROP FUNCTION IF EXISTS vs_tpcc_version
//
CREATE FUNCTION vs_tpcc_version() RETURNS INT DETERMINISTIC NO SQL RETURN 1
//
