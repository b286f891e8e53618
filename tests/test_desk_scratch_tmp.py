import pytest
from tests.desk_data import flagged_acta

@pytest.mark.django_db
def test_probe(client_as):
    a = flagged_acta(seed=3, pages=3, filler_words=100)
    print(a.document.status, [(v.code, v.fields) for v in a.extraction.violations.all()])
    fvs = list(a.extraction.fields.all())
    print(len(fvs), sum(1 for f in fvs if f.proofs), a.document.blocks.count())
    c = client_as("reviewer")
    r = c.get(f"/documents/{a.document.id}/")
    print(r.status_code); open("/tmp/deskprobe/desk.html","w").write(r.content.decode())
    r = c.get(f"/documents/{a.document.id}/proof/?field=rows[4].votes_words", HTTP_HX_REQUEST="true")
    print(r.status_code, r.content.decode()[:1500])
