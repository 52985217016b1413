"""Operators mark pairs of their own memories as the same fact or not; the thresholds page checks the
dedup rule on those marks and suggests the distance that keeps wrong merges at zero."""

import pytest

from memory.dedup.pair_marks import report
from memory.models import Memory, PairMark
from memory.text.analysis import search_tokens
from memory.text.digests import keyword_digests
from memory.text.vectors import embed_for_space
from tenants import scope
from tests.conftest import make_space
from tests.support.console import login

pytestmark = pytest.mark.django_db
SAME = ("Our busiest season is December.", "December is our busiest season.")
DIFFERENT = ("We ship to Germany.", "We ship from Germany.")
# Across languages the merge rule has no shared terms to compare, so a translation stays a missed merge.
PARAPHRASE = ("We have four delivery vans.", "У нас четыре фургона для доставки.")


@pytest.fixture
def memories(tenant_a, space_a):
    texts = [*SAME, *DIFFERENT, *PARAPHRASE]
    with scope.tenant_scope(tenant_a, space_a):
        vectors = embed_for_space(space_a.id, texts)
        rows = [
            Memory.objects.create(tenant_id=tenant_a.id, space=space_a, kind="fact", content=t, embedding=v,
                                  importance=0.5, keyword_digests=keyword_digests(space_a.id, search_tokens(t)))
            for t, v in zip(texts, vectors, strict=True)
        ]  # fmt: skip
    return {r.content: r for r in rows}


def mark(client, space, a, b, label):
    return client.post(f"/console/spaces/{space.external_id}/thresholds/marks/",
                       {"first": a.pk, "second": b.pk, "label": label}, HTTP_HX_REQUEST="true")  # fmt: skip


def test_marks_give_precision_recall_and_a_safe_suggestion(client, tenant_a, space_a, memories):
    login(client, tenant_a, "operator")
    page = client.get(f"/console/spaces/{space_a.external_id}/thresholds/").content.decode()
    assert 'id="mark-candidates"' in page and SAME[0] in page
    mark(client, space_a, memories[SAME[0]], memories[SAME[1]], "same")
    response = mark(client, space_a, memories[DIFFERENT[0]], memories[DIFFERENT[1]], "different")
    text = response.content.decode()
    assert 'id="marks-merged-same">1<' in text and 'id="marks-merged-different">0<' in text
    assert 'id="marks-precision">1.00<' in text and 'id="marks-recall">1.00<' in text
    with scope.tenant_scope(tenant_a, space_a):
        assert PairMark.objects.count() == 2
        # Without the same-terms check, "ship to" / "ship from" would merge: the suggestion stays below it.
        loose = report(space_a, dedup_distance=0.2, requires_same_terms=False)
    assert loose.merged_different == 1 and loose.precision == 0.5
    assert loose.suggested_distance is not None and loose.suggested_distance < loose.wrong_merge_ceiling
    assert loose.suggested_merges == 1


def test_a_paraphrase_marked_same_shows_up_as_a_missed_merge(client, tenant_a, space_a, memories):
    login(client, tenant_a, "operator")
    mark(client, space_a, memories[PARAPHRASE[0]], memories[PARAPHRASE[1]], "same")
    text = mark(client, space_a, memories[SAME[0]], memories[SAME[1]], "same").content.decode()
    assert 'id="marks-recall">0.50<' in text
    # Marking the same pair again changes the mark instead of adding another.
    mark(client, space_a, memories[SAME[1]], memories[SAME[0]], "different")
    with scope.tenant_scope(tenant_a, space_a):
        assert PairMark.objects.count() == 2
        assert PairMark.objects.filter(label="different").count() == 1


def test_support_cannot_mark_and_other_spaces_rows_are_refused(client, tenant_a, space_a, memories):
    other = make_space(tenant_a, "customer-9")
    with scope.tenant_scope(tenant_a, other):
        vector = embed_for_space(other.id, ["Elsewhere"])[0]
        foreign = Memory.objects.create(tenant_id=tenant_a.id, space=other, kind="fact", content="Elsewhere",
                                        embedding=vector, importance=0.5)  # fmt: skip
    login(client, tenant_a, "operator")
    refused = mark(client, space_a, memories[SAME[0]], foreign, "same")
    assert "must belong to this space" in refused.content.decode()
    client.logout()
    login(client, tenant_a, "support")
    assert mark(client, space_a, memories[SAME[0]], memories[SAME[1]], "same").status_code == 403
    with scope.tenant_scope(tenant_a):
        assert PairMark.objects.count() == 0


def test_another_tenant_cannot_mark(client, tenant_b, space_a, memories):
    login(client, tenant_b, "operator")
    assert mark(client, space_a, memories[SAME[0]], memories[SAME[1]], "same").status_code == 404
