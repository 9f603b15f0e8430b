-- TPROC-C (TPC-C derived) schema for PostgreSQL: standard table and column names.
-- Sections are read by load.py: [tables] before the load, [keys] after it (faster COPY),
-- [analyze] at the end. {partition:COL} becomes PARTITION BY HASH (COL) when the
-- `partition` parameter is on, else nothing.
-- [tables]
CREATE TABLE warehouse (
    w_id integer NOT NULL,
    w_ytd numeric(12,2),
    w_tax numeric(4,4),
    w_name varchar(10),
    w_street_1 varchar(20),
    w_street_2 varchar(20),
    w_city varchar(20),
    w_state char(2),
    w_zip char(9)
);
CREATE TABLE district (
    d_w_id integer NOT NULL,
    d_id integer NOT NULL,
    d_ytd numeric(12,2),
    d_tax numeric(4,4),
    d_next_o_id integer,
    d_name varchar(10),
    d_street_1 varchar(20),
    d_street_2 varchar(20),
    d_city varchar(20),
    d_state char(2),
    d_zip char(9)
);
CREATE TABLE customer (
    c_w_id integer NOT NULL,
    c_d_id integer NOT NULL,
    c_id integer NOT NULL,
    c_first varchar(16),
    c_middle char(2),
    c_last varchar(16),
    c_street_1 varchar(20),
    c_street_2 varchar(20),
    c_city varchar(20),
    c_state char(2),
    c_zip char(9),
    c_phone char(16),
    c_since timestamp,
    c_credit char(2),
    c_credit_lim numeric(12,2),
    c_discount numeric(4,4),
    c_balance numeric(12,2),
    c_ytd_payment numeric(12,2),
    c_payment_cnt integer,
    c_delivery_cnt integer,
    c_data varchar(500)
) {partition:c_w_id};
CREATE TABLE history (
    h_c_id integer,
    h_c_d_id integer,
    h_c_w_id integer,
    h_d_id integer,
    h_w_id integer,
    h_date timestamp,
    h_amount numeric(6,2),
    h_data varchar(24)
) {partition:h_w_id};
CREATE TABLE new_order (
    no_w_id integer NOT NULL,
    no_d_id integer NOT NULL,
    no_o_id integer NOT NULL
) {partition:no_w_id};
CREATE TABLE orders (
    o_w_id integer NOT NULL,
    o_d_id integer NOT NULL,
    o_id integer NOT NULL,
    o_c_id integer,
    o_carrier_id integer,
    o_ol_cnt integer,
    o_all_local integer,
    o_entry_d timestamp
) {partition:o_w_id};
CREATE TABLE order_line (
    ol_w_id integer NOT NULL,
    ol_d_id integer NOT NULL,
    ol_o_id integer NOT NULL,
    ol_number integer NOT NULL,
    ol_i_id integer,
    ol_supply_w_id integer,
    ol_delivery_d timestamp,
    ol_quantity integer,
    ol_amount numeric(6,2),
    ol_dist_info char(24)
) {partition:ol_w_id};
CREATE TABLE item (
    i_id integer NOT NULL,
    i_im_id integer,
    i_name varchar(24),
    i_price numeric(5,2),
    i_data varchar(50)
);
CREATE TABLE stock (
    s_w_id integer NOT NULL,
    s_i_id integer NOT NULL,
    s_quantity integer,
    s_dist_01 char(24),
    s_dist_02 char(24),
    s_dist_03 char(24),
    s_dist_04 char(24),
    s_dist_05 char(24),
    s_dist_06 char(24),
    s_dist_07 char(24),
    s_dist_08 char(24),
    s_dist_09 char(24),
    s_dist_10 char(24),
    s_ytd integer,
    s_order_cnt integer,
    s_remote_cnt integer,
    s_data varchar(50)
) {partition:s_w_id};
-- [keys]
ALTER TABLE warehouse ADD CONSTRAINT warehouse_i1 PRIMARY KEY (w_id);
ALTER TABLE district ADD CONSTRAINT district_i1 PRIMARY KEY (d_w_id, d_id);
ALTER TABLE item ADD CONSTRAINT item_i1 PRIMARY KEY (i_id);
ALTER TABLE stock ADD CONSTRAINT stock_i1 PRIMARY KEY (s_w_id, s_i_id);
ALTER TABLE order_line ADD CONSTRAINT order_line_i1 PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number);
ALTER TABLE customer ADD CONSTRAINT customer_i1 PRIMARY KEY (c_w_id, c_d_id, c_id);
CREATE UNIQUE INDEX customer_i2 ON customer (c_w_id, c_d_id, c_last, c_first, c_id);
ALTER TABLE orders ADD CONSTRAINT orders_i1 PRIMARY KEY (o_w_id, o_d_id, o_id);
CREATE UNIQUE INDEX orders_i2 ON orders (o_w_id, o_d_id, o_c_id, o_id);
ALTER TABLE new_order ADD CONSTRAINT new_order_i1 PRIMARY KEY (no_w_id, no_d_id, no_o_id);
-- [analyze]
ANALYZE;
