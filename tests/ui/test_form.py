"""The parameter form is generated from a workload's declared Params and reads back typed."""
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QLineEdit, QSpinBox

from app.ui.live.param_form import ParamFormWidget
from workloads.params import MetricSpec, Param, PhaseSpec, WorkloadSpec
from workloads.registry import get

SPEC = WorkloadSpec(
    name="demo", title="Demo", description="", dialects=("postgres",),
    phases=(PhaseSpec("measure", "measured", seconds="duration"),),
    metrics=(MetricSpec("qps", "QPS", "QPS", summary="rate", headline=True),),
    params=(
        Param("clients", "int", 4, "Concurrent clients.", min=1, max=64),
        Param("ratio", "float", 0.5, "Read share.", min=0.0, max=1.0),
        Param("duration", "int", 60, "Seconds measured.", min=1, max=3600, unit="s"),
        Param("rebuild", "bool", False, "Reload tables.", group="schema"),
        Param("mode", "choice", "fast", "How to go.", choices=("fast", "safe")),
        Param("label", "str", "x", "A label."),
    ))


def test_widgets_match_param_types_with_ranges_units_and_help(qtbot):
    form = ParamFormWidget(SPEC)
    qtbot.addWidget(form)
    clients = form.widget("clients")
    assert isinstance(clients, QSpinBox)
    assert (clients.minimum(), clients.maximum(), clients.value()) == (1, 64, 4)
    assert isinstance(form.widget("ratio"), QDoubleSpinBox)
    assert form.widget("ratio").maximum() == 1.0
    assert form.widget("duration").suffix() == " s"
    assert isinstance(form.widget("rebuild"), QCheckBox)
    assert isinstance(form.widget("mode"), QComboBox)
    assert [form.widget("mode").itemText(i) for i in range(2)] == ["fast", "safe"]
    assert isinstance(form.widget("label"), QLineEdit)
    assert "Concurrent clients." in clients.toolTip()
    assert "1 – 64" in clients.toolTip()


def test_values_read_back_typed_and_equal_to_defaults():
    form = ParamFormWidget(SPEC)
    values = form.values()
    assert values == SPEC.defaults()
    assert type(values["clients"]) is int and type(values["ratio"]) is float
    assert type(values["rebuild"]) is bool
    assert SPEC.resolve(values) == values       # the workload accepts what the form gives


def test_ranges_are_enforced_while_typing(qtbot):
    form = ParamFormWidget(SPEC)
    qtbot.addWidget(form)
    form.show()
    clients = form.widget("clients")
    clients.lineEdit().selectAll()
    qtbot.keyClicks(clients.lineEdit(), "999")      # above max: the spin box refuses it
    assert form.values()["clients"] <= 64
    clients.setValue(0)                               # below min: clamped
    assert form.values()["clients"] == 1


def test_typed_values_are_read_without_pressing_enter(qtbot):
    form = ParamFormWidget(SPEC)
    qtbot.addWidget(form)
    form.show()
    dur = form.widget("duration")
    dur.lineEdit().selectAll()
    qtbot.keyClicks(dur.lineEdit(), "15")
    box = form.widget("rebuild")
    qtbot.mouseClick(box, Qt.MouseButton.LeftButton, pos=QPoint(7, box.height() // 2))
    form.widget("mode").setCurrentText("safe")
    v = form.values()
    assert v["duration"] == 15 and v["rebuild"] is True and v["mode"] == "safe"


def test_set_values_ignores_unknown_and_invalid_saved_values():
    form = ParamFormWidget(SPEC)
    form.set_values({"clients": "8", "gone": 1, "ratio": 7.0, "mode": "nope"})
    v = form.values()
    assert v["clients"] == 8 and v["ratio"] == 0.5 and v["mode"] == "fast"


def test_point_query_form_has_every_declared_param():
    spec = get("point-query")
    form = ParamFormWidget(spec)
    assert set(form.values()) == {p.name for p in spec.params}
    assert form.widget("table-size").maximum() == 1_000_000_000
    assert form.widget("table-size").suffix() == " rows"


def test_hammerdb_fields_are_labelled_in_words(qtbot):
    """Issue 20, item 10: HammerDB's bare "Cli" and "Schema" fields."""
    from PySide6.QtWidgets import QLabel
    form = ParamFormWidget(get("hammerdb"))
    qtbot.addWidget(form)
    labels = {lab.buddy().objectName(): lab.text() for lab in form.findChildren(QLabel)
              if lab.buddy() is not None}
    assert labels["param_cli"] == "HammerDB command"
    assert labels["param_schema"] == "Schema database"
