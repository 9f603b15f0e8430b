"""The Compare view with a run of sysbench driven by Versus beside an imported sysbench log:
both load, the summary table shows the QPS sysbench itself reported for each."""
import os

import pytest

from app.model.runset import RunRef
from tests.recorded import record_native_and_imported


@pytest.fixture(scope="module")
def native_and_imported(tmp_path_factory):
    return record_native_and_imported(tmp_path_factory.mktemp("cmpview"))


def test_compare_view_shows_native_and_imported(native_and_imported, qtbot, tmp_path):
    from app.ui.charts.dashboard import configure_pyqtgraph
    from app.ui.compare.view import CompareWidget
    native, imported, _ = native_and_imported
    configure_pyqtgraph()
    v = CompareWidget(export_dir=tmp_path)
    qtbot.addWidget(v)
    v.resize(1300, 850)
    v.show()
    with qtbot.waitSignal(v.comparison_loaded, timeout=15_000):
        v.set_runs([RunRef(str(native)), RunRef(str(imported))])
    m = v.summary_model
    rows = [" | ".join(str(m.index(r, c).data()) for c in range(m.columnCount()))
            for r in range(m.rowCount())]
    if os.environ.get("VERSUS_SHOT"):
        v.grab().save(os.environ["VERSUS_SHOT"])
    assert v.comp is not None and len(v.comp) == 2
    assert v.comp.phase_values(1, "measure")["qps"] == 57817.38
    assert any("57,817" in row for row in rows), rows
    v.clock.pause()
    v.tasks.wait(10_000)
