"""bayesian_network specs: numbers computed here from the data's counts, streaming and resume,
and every user error exits 2 naming the file and the key, column or row."""

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from bayescheck.inference.families import fit
from bayescheck.models import load_spec
from bayescheck.models.bayesian_network import BayesianNetwork, NetworkProblem, NetworkQuery
from bayescheck.models.errors import SpecError
from bayescheck.reports.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "bayesian_network"

DATA = "a,b,c\nx,u,p\nx,v,p\ny,v,q\ny,v,p\nx,u,q\ny,u,q\nx,v,q\n"

SPEC = """model = "bayesian_network"
[data]
path = "data.csv"
[structure]
edges = [["a", "b"], ["a", "c"], ["b", "c"]]
[prior]
{prior}
{extra}
"""


def write(tmp_path, prior="concentration = 1.0", extra="", data=DATA):
    (tmp_path / "data.csv").write_text(data)
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC.format(prior=prior, extra=extra))
    return spec


def run(tmp_path, spec, capsys):
    code = main(["fit", str(spec), "--out", str(tmp_path / "out"), "--quiet"])
    return code, capsys.readouterr().err


def test_cpts_are_the_laplace_counts_and_the_query_enumerates(tmp_path):
    spec = write(tmp_path, extra='[[query]]\nname = "q"\ntarget = "a"\n'
                                 'evidence = { c = "q" }\n')
    result = fit(load_spec(spec))
    table = pd.read_csv(tmp_path / "data.csv")
    cpts = result.posterior.parameters["cpts"]
    # P(c | a, b) with rows (a, b) in sorted order, Laplace: (n_abc + 1) / (n_ab + 2)
    for j, (a, b) in enumerate([("x", "u"), ("x", "v"), ("y", "u"), ("y", "v")]):
        rows = table[(table.a == a) & (table.b == b)]
        for k, c in enumerate(["p", "q"]):
            assert cpts["c"]["mean"][j][k] == pytest.approx(
                ((rows.c == c).sum() + 1) / (len(rows) + 2))
    assert cpts["c"]["rows"][1] == "a=x, b=v"
    # P(a | c = q) by summing the posterior-mean joint over b
    p_a = {a: ((table.a == a).sum() + 1) / (len(table) + 2) for a in "xy"}
    joint = {}
    for a in "xy":
        total = 0.0
        for b in "uv":
            rows_a = table[table.a == a]
            p_b = ((rows_a.b == b).sum() + 1) / (len(rows_a) + 2)
            rows_ab = rows_a[rows_a.b == b]
            p_c = ((rows_ab.c == "q").sum() + 1) / (len(rows_ab) + 2)
            total += p_b * p_c
        joint[a] = p_a[a] * total
    q = result.posterior.parameters["query"][0]
    for a in "xy":
        assert q["joint"][a] == pytest.approx(joint[a], rel=1e-12)
        assert q["probabilities"][a] == pytest.approx(joint[a] / sum(joint.values()))
    # BD score: a 2x2x2 table, prior 1 everywhere
    expected = 0.0
    groups = [(table, "a")] + [(table[table.a == a], "b") for a in "xy"] + [
        (table[(table.a == a) & (table.b == b)], "c") for a in "xy" for b in "uv"]
    for rows, col in groups:
        expected += math.lgamma(2) - math.lgamma(2 + len(rows))
        for s in set(table[col]):
            expected += math.lgamma(1 + (rows[col] == s).sum()) - math.lgamma(1)
    assert result.posterior.log_evidence == pytest.approx(expected, rel=1e-12)


def test_bdeu_prior_and_structure_comparison(tmp_path):
    full = fit(load_spec(write(tmp_path, prior="equivalent_sample_size = 4.0")))
    assert full.posterior.parameters["cpts"]["c"]["prior"] == pytest.approx(4.0 / 8)
    assert full.posterior.parameters["cpts"]["a"]["prior"] == pytest.approx(2.0)
    body = SPEC.format(prior="equivalent_sample_size = 4.0", extra="").replace(
        '[["a", "b"], ["a", "c"], ["b", "c"]]', "[]")
    (tmp_path / "spec.toml").write_text(body)
    empty = fit(load_spec(tmp_path / "spec.toml"))
    assert empty.posterior.log_evidence != pytest.approx(full.posterior.log_evidence)


def test_glob_stream_equals_one_file_and_resumes(tmp_path):
    one = fit(load_spec(EXAMPLE / "asia.toml"))
    frame = pd.read_csv(EXAMPLE / "asia.csv")
    folder = tmp_path / "stream"
    (folder / "batches").mkdir(parents=True)
    for i, part in enumerate(np.array_split(np.arange(len(frame)), 4)):
        frame.iloc[part].to_csv(folder / "batches" / f"{i}.csv", index=False)
    text = (EXAMPLE / "asia.toml").read_text().replace('path = "asia.csv"',
                                                      'path = "batches/*.csv"')
    (folder / "spec.toml").write_text(text)
    streamed = fit(load_spec(folder / "spec.toml"), out=tmp_path / "out")
    assert len(streamed.record.batches) == 4
    assert streamed.posterior.parameters["cpts"] == one.posterior.parameters["cpts"]
    assert streamed.posterior.log_evidence == pytest.approx(one.posterior.log_evidence, rel=1e-13)
    # a fifth batch arrives: resume absorbs only it
    frame.iloc[:10].to_csv(folder / "batches" / "4.csv", index=False)
    resumed = fit(load_spec(folder / "spec.toml"), out=tmp_path / "out", resume=True)
    assert resumed.record.n_rows == len(frame) + 10 and len(resumed.record.batches) == 5


def test_example_independences_and_the_whole_graph_mistake():
    result = fit(load_spec(EXAMPLE / "asia.toml"))
    ind = {i["name"]: i for i in result.posterior.parameters["independence"]}
    assert ind["tub_smoke"]["d_separated"] is True  # whole-graph moralisation says False
    assert ind["tub_smoke"]["ancestral_set"] == ["asia", "smoke", "tub"]
    assert ind["tub_smoke_given_either"]["d_separated"] is False
    assert ind["tub_smoke_given_either"]["path"] == ["tub", "lung", "smoke"]
    assert ind["tub_smoke_given_either"]["moral_links"] == [["tub", "lung"]]
    assert ind["xray_dysp_given_either"]["d_separated"] is True


def test_fit_does_not_import_pymc(tmp_path):
    import subprocess
    import sys

    code = (
        "import sys; from bayescheck.models import load_spec; "
        "from bayescheck.inference.families import fit; "
        f"fit(load_spec({str(EXAMPLE / 'asia.toml')!r})); "
        "print(any(m.split('.')[0] in ('pymc', 'arviz') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parents[2], check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("prior, extra, data, expected", [
    ("concentration = 1.0", "", DATA.replace("a,b,c", "a,b,d"),
     r"key 'structure.edges\[1\]'.*node 'c' has no data"),
    ("concentration = 1.0", '[[query]]\ntarget = "a"\nevidence = { b = "w" }\n', DATA,
     r"key 'query\[0\].evidence.b'.*value 'w' never seen.*'u', 'v'"),
    ("concentration = 1.0", '[[query]]\ntarget = "a"\nevidence = { a = "x" }\n', DATA,
     r"key 'query\[0\].evidence.a'.*also evidence"),
    ("concentration = 1.0", '[[query]]\ntarget = "z"\n', DATA,
     r"key 'query\[0\].target'.*unknown node 'z'"),
    ("concentration = 1.0\nequivalent_sample_size = 2.0", "", DATA,
     r"key 'prior.equivalent_sample_size'.*not both"),
    ("concentration = -1.0", "", DATA, r"key 'prior.concentration'.*positive"),
    ("alpha = 1.0", "", DATA, r"key 'prior.alpha'.*unknown key"),
    ("concentration = 1.0", '[[independence]]\nx = ["a"]\ny = ["a"]\n', DATA,
     r"key 'independence\[0\]'.*must not share"),
    ("concentration = 1.0", "", "a,b,c\nx,,p\ny,,q\n",
     r"column 'b'.*node 'b' has no observed value"),
    ("concentration = 1.0", "[fit]\nmax_iter = 0\n", DATA, r"key 'fit.max_iter'"),
    ("concentration = 1.0", "[fit]\ntol = -1.0\n", DATA, r"key 'fit.tol'"),
])
def test_bad_input_exits_2_naming_the_culprit(tmp_path, capsys, prior, extra, data, expected):
    code, err = run(tmp_path, write(tmp_path, prior, extra, data), capsys)
    assert code == 2, err
    assert str(tmp_path) in err
    assert __import__("re").search(expected, err), err


def test_cycle_exits_2_naming_it(tmp_path, capsys):
    spec = write(tmp_path)
    spec.write_text(spec.read_text().replace('["b", "c"]', '["c", "a"]'))
    code, err = run(tmp_path, spec, capsys)
    assert code == 2 and "key 'structure.edges'" in err
    assert "cycle a -> c -> a" in err


def test_python_users_get_the_same_checks():
    with pytest.raises(NetworkProblem, match="query\\[0\\].evidence.a"):
        BayesianNetwork(nodes=("a", "b"), edges=(("a", "b"),),
                        queries=(NetworkQuery("q", "a", (("a", "x"),)),))
    with pytest.raises(NetworkProblem, match="acyclic"):
        BayesianNetwork(nodes=("a", "b"), edges=(("a", "b"), ("b", "a")))


def test_posterior_json_holds_the_answers(tmp_path, capsys):
    shutil.copy(EXAMPLE / "asia.csv", tmp_path / "asia.csv")
    shutil.copy(EXAMPLE / "asia.toml", tmp_path / "asia.toml")
    assert main(["fit", str(tmp_path / "asia.toml"), "--out", str(tmp_path / "o"),
                 "--quiet"]) == 0
    post = json.loads((tmp_path / "o" / "posterior.json").read_text())
    assert post["model"] == "bayesian_network" and post["n_rows"] == 1000
    assert set(post["parameters"]["cpts"]) == {"asia", "smoke", "tub", "lung", "bronc",
                                               "either", "xray", "dysp"}
    q = post["parameters"]["query"][0]
    assert sum(q["probabilities"].values()) == pytest.approx(1.0)
    assert math.isfinite(post["log_evidence"])


def test_states_spelt_like_missing_values_are_states(tmp_path):
    """"None", "NA", "null", "nan" and "01" are states as written; only an empty cell is missing."""
    spelt = ("a,b,c\nNone,NA,null\nNone,NA,nan\nyes,01,null\nyes,1,nan\nNone,1,N/A\n")
    spec = write(tmp_path, extra='[[query]]\nname = "q"\ntarget = "c"\n'
                                 'evidence = { a = "None", b = "NA" }\n', data=spelt)
    result = fit(load_spec(spec))
    cpts = result.posterior.parameters["cpts"]
    assert cpts["a"]["states"] == ["None", "yes"]
    assert cpts["b"]["states"] == ["01", "1", "NA"]
    assert cpts["c"]["states"] == ["N/A", "nan", "null"]
    assert cpts["a"]["mean"][0] == pytest.approx([(3 + 1) / (5 + 2), (2 + 1) / (5 + 2)])
    assert result.record.n_rows == 5


def test_missing_cells_are_fitted_by_em_streamed_and_resumed(tmp_path, capsys):
    frame = pd.read_csv(EXAMPLE / "asia.csv", dtype=str)
    holed = frame.mask(np.random.default_rng(1).random(frame.shape) < 0.1)
    holed.to_csv(tmp_path / "asia.csv", index=False)
    shutil.copy(EXAMPLE / "asia.toml", tmp_path / "asia.toml")
    one = fit(load_spec(tmp_path / "asia.toml"))
    em = one.posterior.parameters["em"]
    assert em["missing_cells"] == int(holed.isna().to_numpy().sum())
    assert em["incomplete_rows"] == int(holed.isna().any(axis=1).sum())
    assert one.record.n_rows == len(frame) and one.posterior.log_evidence is None
    assert "EM point estimate" in em["words"] and "no longer exact" in em["words"]
    assert all(q["plug_in"] and not q["cross_checked"] for q in one.posterior.parameters["query"])
    # the expected counts of each node add up to every row
    for entry in one.posterior.parameters["cpts"].values():
        assert np.sum(entry["expected_counts"]) == pytest.approx(len(frame), rel=1e-12)
        assert "mean" not in entry and "sd" not in entry
    folder = tmp_path / "stream"
    (folder / "b").mkdir(parents=True)
    for i, part in enumerate(np.array_split(np.arange(len(holed)), 3)):
        holed.iloc[part].to_csv(folder / "b" / f"{i}.csv", index=False)
    (folder / "spec.toml").write_text((EXAMPLE / "asia.toml").read_text().replace(
        'path = "asia.csv"', 'path = "b/*.csv"'))
    first = fit(load_spec(folder / "spec.toml"), out=tmp_path / "out")
    for n, entry in one.posterior.parameters["cpts"].items():
        np.testing.assert_allclose(
            first.posterior.parameters["cpts"][n]["estimate"], entry["estimate"], rtol=1e-12
        )
    holed.iloc[:20].to_csv(folder / "b" / "3.csv", index=False)
    resumed = fit(load_spec(folder / "spec.toml"), out=tmp_path / "out", resume=True)
    assert resumed.record.n_rows == len(frame) + 20 and len(resumed.record.batches) == 4
    # each batch's record (and progress line) counts all its rows, incomplete ones too
    assert [b["rows"] for b in resumed.to_json()["batches"]] == [
        len(p) for p in np.array_split(np.arange(len(holed)), 3)] + [20]
    assert resumed.posterior.parameters["em"]["incomplete_rows"] == \
        em["incomplete_rows"] + int(holed.iloc[:20].isna().any(axis=1).sum())
    # an EM estimate has no exact posterior to draw from
    from bayescheck.inference.families.exact import exact_posterior
    from bayescheck.models.errors import BayescheckError
    with pytest.raises(BayescheckError, match="estimated by EM"):
        exact_posterior("bayesian_network", one.to_json(), draws=10, chains=1)
    # the CLI says the CPTs are EM point estimates
    assert main(["fit", str(tmp_path / "asia.toml"), "--out", str(tmp_path / "o")]) == 0
    printed = capsys.readouterr()
    assert "EM point estimate" in printed.out + printed.err


def _late_state_batches(folder, frame, holes=0.0):
    """Asia's rows in three batches ordered so that states first appear in later batches:
    batch 0 has no 'yes' for asia or tub, batch 1 brings tub = yes, batch 2 asia = yes."""
    rng = np.random.default_rng(2)
    if holes:
        frame = frame.mask((rng.random(frame.shape) < holes) & (frame != "yes").to_numpy())
    rank = (frame["tub"] == "yes").astype(int) + 2 * (frame["asia"] == "yes").astype(int)
    ordered = frame.iloc[np.argsort(rank.to_numpy(), kind="stable")]
    cut = [int((rank == 0).sum()), int((rank <= 1).sum())]
    (folder / "b").mkdir(parents=True)
    for i, (lo, hi) in enumerate(zip([0, *cut], [*cut, len(ordered)], strict=True)):
        ordered.iloc[lo:hi].to_csv(folder / "b" / f"{i}.csv", index=False)
    (folder / "spec.toml").write_text((EXAMPLE / "asia.toml").read_text().replace(
        'path = "asia.csv"', 'path = "b/*.csv"'))
    first = pd.read_csv(folder / "b" / "0.csv", dtype=str, keep_default_na=False)
    assert "yes" not in set(first["asia"]) | set(first["tub"])
    return ordered


@pytest.mark.parametrize("holes", [0.0, 0.05])
def test_states_first_seen_in_later_batches_resume_and_equal_one_file(tmp_path, holes):
    """One pass: a state first seen in a later batch (and on resume) grows the tables; the
    result equals the fit of all rows in one file (complete rows, and EM with holes)."""
    frame = pd.read_csv(EXAMPLE / "asia.csv", dtype=str)
    ordered = _late_state_batches(tmp_path / "s", frame, holes)
    ordered.to_csv(tmp_path / "asia.csv", index=False)
    shutil.copy(EXAMPLE / "asia.toml", tmp_path / "asia.toml")
    one = fit(load_spec(tmp_path / "asia.toml"))
    # the first two batches, checkpointed; then the third arrives with asia = yes
    third = tmp_path / "s" / "b" / "2.csv"
    held = third.read_text()
    third.unlink()
    # asia.toml asks a query with evidence asia = yes: refused, but the counts are kept
    with pytest.raises(SpecError, match=r"'yes' never seen in the data nor declared in "
                                        r"\[states\]; 'asia' takes 'no'$"):
        fit(load_spec(tmp_path / "s" / "spec.toml"), out=tmp_path / "out")
    assert (tmp_path / "out" / "checkpoint.npz").exists()
    third.write_text(held)
    resumed = fit(load_spec(tmp_path / "s" / "spec.toml"), out=tmp_path / "out", resume=True)
    streamed = fit(load_spec(tmp_path / "s" / "spec.toml"))
    key = "estimate" if holes else "mean"
    for result in (resumed, streamed):
        assert len(result.record.batches) == 3 and result.record.n_rows == one.record.n_rows == len(
            frame
        )
        for n, entry in one.posterior.parameters["cpts"].items():
            got = result.posterior.parameters["cpts"][n]
            assert got["states"] == entry["states"] and got["rows"] == entry["rows"]
            assert got["counts"] == entry["counts"]
            np.testing.assert_allclose(got[key], entry[key], rtol=1e-12)
        if holes:
            assert (
                result.posterior.parameters["em"]["missing_cells"]
                == one.posterior.parameters["em"]["missing_cells"]
                > 0
            )
        else:
            assert result.posterior.log_evidence == pytest.approx(
                one.posterior.log_evidence, rel=1e-13
            )


def test_in_memory_frames_equal_the_csv_fit(tmp_path):
    from bayescheck.data.sources import DataSource
    from bayescheck.models.spec import Spec

    csv = fit(load_spec(EXAMPLE / "asia.toml"))
    spec = load_spec(EXAMPLE / "asia.toml")
    frame = pd.read_csv(EXAMPLE / "asia.csv", dtype=str)
    shuffled = frame.sample(frac=1.0, random_state=0)
    parts = [shuffled.iloc[i:i + 400] for i in (0, 400, 800)]
    frames = fit(Spec(model=spec.model, data=DataSource.from_frame(*parts), raw=spec.raw))
    assert frames.posterior.parameters["cpts"] == csv.posterior.parameters["cpts"]
    assert frames.posterior.log_evidence == pytest.approx(csv.posterior.log_evidence, rel=1e-13)
    # the same frame twice is refused (the in-memory fingerprint recognises it)
    from bayescheck.models.errors import DataError
    with pytest.raises(DataError, match="same content as batch 'frame 0'"):
        fit(Spec(model=spec.model, data=DataSource.from_frame(parts[0], parts[0].copy()),
                 raw=spec.raw))


@pytest.mark.parametrize("holes", [0.0, 0.05])
def test_categorical_frames_equal_the_text_fit(holes):
    """A frame of pandas categoricals is counted from its own codes: unused categories,
    categories in another order, integer categories, empty cells and a later batch with
    other categories give the fit of the same cells as text (states sorted as text)."""
    from bayescheck.data.sources import DataSource
    from bayescheck.models.spec import Spec

    spec = load_spec(EXAMPLE / "asia.toml")
    text = pd.read_csv(EXAMPLE / "asia.csv", dtype=str)
    rng = np.random.default_rng(5)
    text = text.mask(rng.random(text.shape) < holes)
    text["bronc"] = text["bronc"].map({"yes": "10", "no": "9"}, na_action="ignore")
    parts = [text.iloc[:700], text.iloc[700:]]
    cats = []
    for k, part in enumerate(parts):
        frame = part.astype("category")
        # unused categories, one of them also in the other batch's rows or not at all
        frame["asia"] = frame["asia"].cat.add_categories(["maybe"] if k else ["never"])
        frame["lung"] = frame["lung"].cat.reorder_categories(
            list(frame["lung"].cat.categories)[::-1])
        frame["bronc"] = part["bronc"].astype(float).astype("Int64").astype("category")
        cats.append(frame)
    assert cats[0]["bronc"].cat.categories.tolist() == [9, 10]
    want = fit(Spec(model=spec.model, data=DataSource.from_frame(*parts), raw=spec.raw))
    got = fit(Spec(model=spec.model, data=DataSource.from_frame(*cats), raw=spec.raw))
    assert got.posterior.parameters["cpts"]["bronc"]["states"] == ["10", "9"]
    assert "maybe" not in got.posterior.parameters["cpts"]["asia"]["states"]
    assert got.posterior.parameters["cpts"] == want.posterior.parameters["cpts"]
    assert got.posterior.parameters["query"] == want.posterior.parameters["query"]
    if holes:
        assert got.posterior.parameters["em"]["missing_cells"] == want.posterior.parameters["em"][
            "missing_cells"] > 0
    else:
        assert got.posterior.log_evidence == want.posterior.log_evidence


def test_categorical_node_with_no_observed_value_is_refused():
    from bayescheck.data.sources import DataSource
    from bayescheck.models.errors import DataError
    from bayescheck.models.spec import Spec

    model = BayesianNetwork(nodes=("a", "b"), edges=(("a", "b"),))
    frame = pd.DataFrame({"a": ["x", "y", "x"],
                          "b": pd.Categorical([None, None, None], categories=["u", "v"])})
    with pytest.raises(DataError, match="node 'b' has no observed value"):
        fit(Spec(model=model, data=DataSource.from_frame(frame), raw={}))


def test_held_states_refuse_a_new_state_naming_column_and_row():
    from bayescheck.data.sources import DataSource
    from bayescheck.models.errors import DataError
    from bayescheck.models.spec import Spec

    model = BayesianNetwork(nodes=("a", "b"), edges=(("a", "b"),),
                            held_states={"a": ("x", "y"), "b": ("u", "v")})
    frame = pd.DataFrame({"a": pd.array(["x", "y", "x", "y"], dtype="str"),
                          "b": pd.array(["u", "v", "w", "w"], dtype="str")})
    with pytest.raises(DataError, match=r"value 'w' is not one of the declared states "
                                        r"\('u', 'v'\)") as err:
        fit(Spec(model=model, data=DataSource.from_frame(frame), raw={}))
    assert err.value.column == "b" and err.value.row == 3
    ok = fit(Spec(model=model, data=DataSource.from_frame(frame.iloc[:2]), raw={}))
    assert ok.posterior.parameters["cpts"]["b"]["counts"] == [[1, 0], [0, 1]]
