"""A TPROC-C schema built the way HammerDB builds it is usable by Versus's transactions.

HammerDB cannot run here, so the tests build HammerDB's schema themselves: the tables,
types, keys, index names and table options of HammerDB's non-partitioned build (pgoltp.tcl,
mariaoltp.tcl), one warehouse of TPC-C rows, HammerDB's secondary indexes after the rows on
PostgreSQL, statistics, and stand-ins for HammerDB's own routines (same names). Then
`versus run` must reuse it as it is, with stored procedures on and off, without errors, and
leave it consistent.
"""
from __future__ import annotations

import json
import random
from urllib.parse import urlsplit

import pytest

from app.store.session import SessionFile
from tests.dbs import MY, PG, query, unique, versus

# --- HammerDB's schema ---------------------------------------------------------------------
# PostgreSQL (pgoltp.tcl, not Oracle-compatible): NOT NULL nearly everywhere, smallint for
# district ids and counters, timestamptz dates, stock keyed (s_i_id, s_w_id), primary keys
# in CREATE TABLE, the two secondary indexes after the load.
PG_TABLES = """
CREATE TABLE customer (c_since timestamp with time zone NOT NULL, c_id integer NOT NULL,
    c_w_id integer NOT NULL, c_d_id smallint NOT NULL, c_payment_cnt smallint NOT NULL,
    c_delivery_cnt smallint NOT NULL, c_first character varying(16) NOT NULL,
    c_middle character(2) NOT NULL, c_last character varying(16) NOT NULL,
    c_street_1 character varying(20) NOT NULL, c_street_2 character varying(20) NOT NULL,
    c_city character varying(20) NOT NULL, c_state character(2) NOT NULL,
    c_zip character(9) NOT NULL, c_phone character(16) NOT NULL, c_credit character(2) NOT NULL,
    c_credit_lim numeric(12,2) NOT NULL, c_discount numeric(4,4) NOT NULL,
    c_balance numeric(12,2) NOT NULL, c_ytd_payment numeric(12,2) NOT NULL,
    c_data character varying(500) NOT NULL,
    CONSTRAINT customer_i1 PRIMARY KEY (c_w_id, c_d_id, c_id));
CREATE TABLE district (d_w_id integer NOT NULL, d_next_o_id integer NOT NULL,
    d_id smallint NOT NULL, d_ytd numeric(12,2) NOT NULL, d_tax numeric(4,4) NOT NULL,
    d_name character varying(10) NOT NULL, d_street_1 character varying(20) NOT NULL,
    d_street_2 character varying(20) NOT NULL, d_city character varying(20) NOT NULL,
    d_state character(2) NOT NULL, d_zip character(9) NOT NULL,
    CONSTRAINT district_i1 PRIMARY KEY (d_w_id, d_id));
CREATE TABLE history (h_date timestamp with time zone NOT NULL, h_c_id integer,
    h_c_w_id integer NOT NULL, h_w_id integer NOT NULL, h_c_d_id smallint NOT NULL,
    h_d_id smallint NOT NULL, h_amount numeric(6,2) NOT NULL,
    h_data character varying(24) NOT NULL);
CREATE TABLE item (i_id integer NOT NULL, i_im_id integer NOT NULL,
    i_name character varying(24) NOT NULL, i_price numeric(5,2) NOT NULL,
    i_data character varying(50) NOT NULL, CONSTRAINT item_i1 PRIMARY KEY (i_id));
CREATE TABLE warehouse (w_id integer NOT NULL, w_name character varying(10) NOT NULL,
    w_street_1 character varying(20) NOT NULL, w_street_2 character varying(20) NOT NULL,
    w_city character varying(20) NOT NULL, w_state character(2) NOT NULL,
    w_zip character(9) NOT NULL, w_tax numeric(4,4) NOT NULL, w_ytd numeric(16,2) NOT NULL,
    CONSTRAINT warehouse_i1 PRIMARY KEY (w_id));
CREATE TABLE stock (s_i_id integer NOT NULL, s_w_id integer NOT NULL, s_ytd integer NOT NULL,
    s_quantity smallint NOT NULL, s_order_cnt smallint NOT NULL,
    s_remote_cnt smallint NOT NULL, s_dist_01 character(24) NOT NULL,
    s_dist_02 character(24) NOT NULL, s_dist_03 character(24) NOT NULL,
    s_dist_04 character(24) NOT NULL, s_dist_05 character(24) NOT NULL,
    s_dist_06 character(24) NOT NULL, s_dist_07 character(24) NOT NULL,
    s_dist_08 character(24) NOT NULL, s_dist_09 character(24) NOT NULL,
    s_dist_10 character(24) NOT NULL, s_data character varying(50) NOT NULL,
    CONSTRAINT stock_i1 PRIMARY KEY (s_i_id, s_w_id));
CREATE TABLE new_order (no_w_id integer NOT NULL, no_o_id integer NOT NULL,
    no_d_id smallint NOT NULL, CONSTRAINT new_order_i1 PRIMARY KEY (no_w_id, no_d_id, no_o_id));
CREATE TABLE orders (o_entry_d timestamp with time zone NOT NULL, o_id integer NOT NULL,
    o_w_id integer NOT NULL, o_c_id integer NOT NULL, o_d_id smallint NOT NULL,
    o_carrier_id smallint, o_ol_cnt smallint NOT NULL, o_all_local smallint NOT NULL,
    CONSTRAINT orders_i1 PRIMARY KEY (o_w_id, o_d_id, o_id));
CREATE TABLE order_line (ol_delivery_d timestamp with time zone, ol_o_id integer NOT NULL,
    ol_w_id integer NOT NULL, ol_i_id integer NOT NULL, ol_supply_w_id integer NOT NULL,
    ol_d_id smallint NOT NULL, ol_number smallint NOT NULL, ol_quantity smallint NOT NULL,
    ol_amount numeric(6,2), ol_dist_info character(24),
    CONSTRAINT order_line_i1 PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number));
"""
PG_INDEXES = """
CREATE UNIQUE INDEX customer_i2 ON customer USING btree (c_w_id, c_d_id, c_last, c_first, c_id);
CREATE UNIQUE INDEX orders_i2 ON orders USING btree (o_w_id, o_d_id, o_c_id, o_id);
ANALYZE;
"""
# HammerDB's functions (default, not pg_storedprocs) by name and argument types; bodies are
# stand-ins, only the names must survive next to Versus's vs_* functions.
PG_ROUTINES = (("dbms_random", "integer, integer", "integer"),
               ("neword", "integer, integer, integer, integer, integer, integer", "numeric"),
               ("delivery", "integer, integer", "integer"),
               ("payment", "integer, integer, integer, integer, integer, integer, numeric, "
                           "varchar, varchar, numeric", "integer"),
               ("ostat", "integer, integer, integer, integer, varchar", "integer"),
               ("slev", "integer, integer, integer", "integer"))

# MariaDB (mariaoltp.tcl): a latin1 database, nullable columns, BINARY (latin1_bin) strings,
# ol_amount an INT, history without a key, stock keyed (s_w_id, s_i_id), every key in
# CREATE TABLE, a prefix index on customer names, ENGINE=InnoDB.
MY_TABLES = """
CREATE TABLE customer (c_id INT(5) NOT NULL, c_d_id INT(2) NOT NULL, c_w_id INT(6) NOT NULL,
    c_first VARCHAR(16) BINARY NULL, c_middle CHAR(2) BINARY NULL,
    c_last VARCHAR(16) BINARY NULL, c_street_1 VARCHAR(20) BINARY NULL,
    c_street_2 VARCHAR(20) BINARY NULL, c_city VARCHAR(20) BINARY NULL,
    c_state CHAR(2) BINARY NULL, c_zip CHAR(9) BINARY NULL, c_phone CHAR(16) BINARY NULL,
    c_since DATETIME NULL, c_credit CHAR(2) BINARY NULL, c_credit_lim DECIMAL(12, 2) NULL,
    c_discount DECIMAL(4, 4) NULL, c_balance DECIMAL(12, 2) NULL,
    c_ytd_payment DECIMAL(12, 2) NULL, c_payment_cnt INT(8) NULL, c_delivery_cnt INT(8) NULL,
    c_data VARCHAR(500) BINARY NULL,
    PRIMARY KEY (c_w_id, c_d_id, c_id),
    KEY c_w_id (c_w_id, c_d_id, c_last(16), c_first(16))) ENGINE = InnoDB;
CREATE TABLE district (d_id INT(2) NOT NULL, d_w_id INT(6) NOT NULL, d_ytd DECIMAL(12, 2) NULL,
    d_tax DECIMAL(4, 4) NULL, d_next_o_id INT NULL, d_name VARCHAR(10) BINARY NULL,
    d_street_1 VARCHAR(20) BINARY NULL, d_street_2 VARCHAR(20) BINARY NULL,
    d_city VARCHAR(20) BINARY NULL, d_state CHAR(2) BINARY NULL, d_zip CHAR(9) BINARY NULL,
    PRIMARY KEY (d_w_id, d_id)) ENGINE = InnoDB;
CREATE TABLE history (h_c_id INT NULL, h_c_d_id INT NULL, h_c_w_id INT NULL, h_d_id INT NULL,
    h_w_id INT NULL, h_date DATETIME NULL, h_amount DECIMAL(6, 2) NULL,
    h_data VARCHAR(24) BINARY NULL) ENGINE = InnoDB;
CREATE TABLE item (i_id INT(6) NOT NULL, i_im_id INT NULL, i_name VARCHAR(24) BINARY NULL,
    i_price DECIMAL(5, 2) NULL, i_data VARCHAR(50) BINARY NULL,
    PRIMARY KEY (i_id)) ENGINE = InnoDB;
CREATE TABLE new_order (no_w_id INT NOT NULL, no_d_id INT NOT NULL, no_o_id INT NOT NULL,
    PRIMARY KEY (no_w_id, no_d_id, no_o_id)) ENGINE = InnoDB;
CREATE TABLE orders (o_id INT NOT NULL, o_w_id INT NOT NULL, o_d_id INT NOT NULL,
    o_c_id INT NULL, o_carrier_id INT NULL, o_ol_cnt INT NULL, o_all_local INT NULL,
    o_entry_d DATETIME NULL, PRIMARY KEY (o_w_id, o_d_id, o_id),
    KEY o_w_id (o_w_id, o_d_id, o_c_id, o_id)) ENGINE = InnoDB;
CREATE TABLE order_line (ol_w_id INT NOT NULL, ol_d_id INT NOT NULL, ol_o_id INT NOT NULL,
    ol_number INT NOT NULL, ol_i_id INT NULL, ol_delivery_d DATETIME NULL, ol_amount INT NULL,
    ol_supply_w_id INT NULL, ol_quantity INT NULL, ol_dist_info CHAR(24) BINARY NULL,
    PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)) ENGINE = InnoDB;
CREATE TABLE stock (s_i_id INT(6) NOT NULL, s_w_id INT(6) NOT NULL, s_quantity INT(6) NULL,
    s_dist_01 CHAR(24) BINARY NULL, s_dist_02 CHAR(24) BINARY NULL,
    s_dist_03 CHAR(24) BINARY NULL, s_dist_04 CHAR(24) BINARY NULL,
    s_dist_05 CHAR(24) BINARY NULL, s_dist_06 CHAR(24) BINARY NULL,
    s_dist_07 CHAR(24) BINARY NULL, s_dist_08 CHAR(24) BINARY NULL,
    s_dist_09 CHAR(24) BINARY NULL, s_dist_10 CHAR(24) BINARY NULL, s_ytd BIGINT(10) NULL,
    s_order_cnt INT(6) NULL, s_remote_cnt INT(6) NULL, s_data VARCHAR(50) BINARY NULL,
    PRIMARY KEY (s_w_id, s_i_id)) ENGINE = InnoDB;
CREATE TABLE warehouse (w_id INT(6) NOT NULL, w_ytd DECIMAL(12, 2) NULL,
    w_tax DECIMAL(4, 4) NULL, w_name VARCHAR(10) BINARY NULL,
    w_street_1 VARCHAR(20) BINARY NULL, w_street_2 VARCHAR(20) BINARY NULL,
    w_city VARCHAR(20) BINARY NULL, w_state CHAR(2) BINARY NULL, w_zip CHAR(9) BINARY NULL,
    PRIMARY KEY (w_id)) ENGINE = InnoDB;
"""
MY_ROUTINES = ("NEWORD", "DELIVERY", "PAYMENT", "OSTAT", "SLEV")

def _dbname(url: str) -> str:
    return urlsplit(url).path.lstrip("/")


def _statements(text: str) -> list[str]:
    return [s.strip() for s in text.split(";") if s.strip()]


# --- building HammerDB's schema in a scratch database ------------------------------------
def _fill(engine: str, url: str) -> None:
    """One warehouse of TPC-C rows from Versus's own generator and bulk path, which name
    their columns, so HammerDB's column order does not matter."""
    from workloads.engine.sql.db import BulkLoader, TargetInfo
    from workloads.tpcc.load import _load_task
    server = PG if engine == "postgres" else MY
    conn = BulkLoader(TargetInfo(engine, server["host"], server["port"], server["user"],
                                _dbname(url)), relaxed=True)
    try:
        for seed, task in enumerate(("item", 1)):
            _load_task(conn, task, random.Random(seed))
    finally:
        conn.close()


def build_pg(url: str) -> None:
    import psycopg
    with psycopg.connect(**PG, dbname=_dbname(url), autocommit=True) as c:
        for s in _statements(PG_TABLES):
            c.execute(s)
        _fill("postgres", url)
        for s in _statements(PG_INDEXES):
            c.execute(s)
        for name, args, returns in PG_ROUTINES:
            c.execute(f"CREATE FUNCTION {name} ({args}) RETURNS {returns} "
                      f"LANGUAGE sql AS 'SELECT NULL::{returns}'")


def build_my(url: str) -> None:
    import pymysql
    db = _dbname(url)
    c = pymysql.connect(**MY, database=db, autocommit=True)
    try:
        cur = c.cursor()
        cur.execute(f"ALTER DATABASE `{db}` CHARACTER SET latin1 COLLATE latin1_swedish_ci")
        for s in _statements(MY_TABLES):
            cur.execute(s)
        _fill("mariadb", url)
        cur.execute("ANALYZE TABLE customer, district, history, item, new_order, orders, "
                    "order_line, stock, warehouse")
        cur.fetchall()
        for name in MY_ROUTINES:
            cur.execute(f"CREATE PROCEDURE {name}() BEGIN END")
    finally:
        c.close()


def _create_db(engine: str, name: str) -> str:
    if engine == "postgres":
        import psycopg
        with psycopg.connect(**PG, dbname="postgres", autocommit=True) as c:
            c.execute(f'CREATE DATABASE "{name}"')
        return f"postgresql://postgres@127.0.0.1:5432/{name}"
    import pymysql
    c = pymysql.connect(**MY, autocommit=True)
    c.cursor().execute(f"CREATE DATABASE `{name}`")
    c.close()
    return f"mysql://root@127.0.0.1:3306/{name}"


def _drop_db(engine: str, name: str) -> None:
    if engine == "postgres":
        import psycopg
        with psycopg.connect(**PG, dbname="postgres", autocommit=True) as c:
            c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        return
    import pymysql
    c = pymysql.connect(**MY, autocommit=True)
    c.cursor().execute(f"DROP DATABASE IF EXISTS `{name}`")
    c.close()


@pytest.fixture(scope="module", params=["postgres", "mariadb"])
def hammerdb(request):
    """(engine, url): a scratch database holding HammerDB's schema of one warehouse; built
    once per engine (the tests leave it consistent), dropped at the end."""
    engine, name = request.param, unique("versus_hdb")
    try:
        url = _create_db(engine, name)
        (build_pg if engine == "postgres" else build_my)(url)
        yield engine, url
    finally:
        _drop_db(engine, name)


# --- what the tests look at ----------------------------------------------------------------
def _execute(engine: str, url: str, sql: str) -> list[tuple]:
    return query(url, sql)


def _scalar(engine: str, url: str, sql: str):
    return _execute(engine, url, sql)[0][0]


def _routines(engine: str, url: str) -> set[str]:
    sql = ("SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
           "WHERE n.nspname = 'public'" if engine == "postgres" else
           "SELECT routine_name FROM information_schema.routines "
           "WHERE routine_schema = DATABASE()")
    return {str(r[0]).lower() for r in _execute(engine, url, sql)}


def _column_type(engine: str, url: str, table: str, column: str) -> str:
    schema = "'public'" if engine == "postgres" else "DATABASE()"
    return str(_scalar(engine, url, f"SELECT data_type FROM information_schema.columns "
                                     f"WHERE table_schema = {schema} AND table_name = "
                                     f"'{table}' AND column_name = '{column}'")).lower()


def _events(path) -> list[dict]:
    with SessionFile(path) as s:
        return s.events(s.runs()[-1].id)


def _summary(evs, phase) -> dict:
    return next(e for e in evs if e["kind"] == "summary" and e["phase"] == phase)


# a distinctive HammerDB column type per engine: still there after the runs
SHAPE = {"postgres": ("customer", "c_since", "timestamp with time zone"),
         "mariadb": ("order_line", "ol_amount", "int")}
HAMMERDB_ROUTINES = {"postgres": {n for n, _, _ in PG_ROUTINES},
                     "mariadb": {n.lower() for n in MY_ROUTINES}}
VS_ROUTINES = {"vs_neword", "vs_payment", "vs_ostat", "vs_delivery", "vs_slev"}


@pytest.mark.parametrize("sp", [True, False], ids=["procedures", "client-statements"])
def test_versus_runs_on_a_hammerdb_built_schema(hammerdb, sp, versus_home, tmp_path):
    engine, url = hammerdb
    before = int(_scalar(engine, url, "SELECT SUM(d_next_o_id) FROM district"))
    out = tmp_path / "tpcc.versus"
    args = ["run", "--target", url, "--workload", "tpcc", "--duration", "3", "--out", str(out)]
    for s in ("warehouses=1", "rampup=0", "vus=2", f"stored-procedures={str(sp).lower()}",
              "check-after=true"):
        args += ["--set", s]
    r = versus(*args, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr

    # reused as it is: no load, HammerDB's types and routines still there
    assert "reusing the TPROC-C schema of 1 warehouse(s) (not built by Versus)" in r.stdout
    evs = _events(out)
    assert not any(e["kind"] == "phase" and e.get("name") == "load" for e in evs)
    table, column, hammerdb_type = SHAPE[engine]
    assert _column_type(engine, url, table, column) == hammerdb_type
    routines = _routines(engine, url)
    assert HAMMERDB_ROUTINES[engine] <= routines
    if sp:
        assert VS_ROUTINES <= routines

    # HammerDB's PostgreSQL counters are smallint: said before the run, not on MariaDB
    warnings = [e["message"] for e in evs if e["kind"] == "log" and e.get("level") == "warning"]
    narrow = [w for w in warnings if w.startswith("narrow counters")]
    if engine == "postgres":
        assert len(narrow) == 1 and "stock.s_order_cnt (smallint)" in narrow[0], warnings
        assert "1.7 million new orders" in narrow[0]
    else:
        assert not narrow, warnings

    # every transaction type ran, none failed
    m = _summary(evs, "measure")
    assert not m["errors"], m["errors"]
    for t in ("new-order", "payment", "order-status", "delivery", "stock-level"):
        assert m["ops"][t] > 0, (t, m["ops"])
    res = m["result"]
    assert res["stored_procedures"] is sp
    # NOPM as HammerDB counts it: the client's new orders moved SUM(d_next_o_id) exactly
    client = res["client"]["new_orders"]
    assert client > 0
    assert res["new_orders"] == client
    after = int(_scalar(engine, url, "SELECT SUM(d_next_o_id) FROM district"))
    assert after - before == client

    # consistent afterwards, by the run's check phase and by `versus check`
    assert _summary(evs, "check")["check"]["ok"]
    c = versus("check", "tpcc", url, "--json")
    res = json.loads(c.stdout)
    assert c.returncode == 0 and res["ok"], res
    assert res["schema"]["origin"] == "other"


def test_check_explains_the_w_ytd_of_hammerdb_mysql_loads(hammerdb, versus_home):
    """HammerDB's MySQL/MariaDB loader starts W_YTD at 3,000,000 against districts summing
    to 300,000: condition 1 fails, and the check says where that comes from."""
    engine, url = hammerdb
    _execute(engine, url, "UPDATE warehouse SET w_ytd = w_ytd + 2700000")
    try:
        c = versus("check", "tpcc", url, "--json")
        res = json.loads(c.stdout)
        assert c.returncode == 1 and not res["ok"]
        c1 = res["conditions"][0]
        assert c1["id"] == 1 and not c1["ok"] and c1["offending"] == 1
        assert "HammerDB's MySQL/MariaDB loader starts W_YTD at 3,000,000" in c1["note"]
        assert all(c["ok"] for c in res["conditions"][1:])
        text = versus("check", "tpcc", url)
        assert "condition 1: FAIL" in text.stdout and "  note: each offending W_YTD" in text.stdout
    finally:
        _execute(engine, url, "UPDATE warehouse SET w_ytd = w_ytd - 2700000")
