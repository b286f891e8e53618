from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseClientRedirect

from extraction.models import Batch
from reviewer.access import WORK_ROLES, role_required
from reviewer.desk import selectors
from reviewer.desk import services as review
from reviewer.roles import ADMIN, REVIEWER
from reviewer.teams.scope import request_team_ids, scoped
from reviewer.whole_numbers import whole_number

PER_PAGE = 50


def _filters(params) -> tuple[int | None, str | None]:
    batch_id = params.get("batch") or ""
    rule = (params.get("rule") or "").strip()[:80] or None
    return whole_number(batch_id), rule


@role_required(REVIEWER, ADMIN)
def queue(request: HttpRequest) -> HttpResponse:
    """Flagged documents nobody has decided yet, oldest first, each with its broken rules in words."""
    batch_id, rule = _filters(request.GET)
    mine = request_team_ids(request)
    team = whole_number(request.GET.get("team") or "")
    team = team if team in mine else None
    teams = [team] if team else mine  # a person in several teams may look at one
    documents = selectors.queue_documents_open(teams=teams, batch_id=batch_id, rule=rule).select_related(
        "batch", "claimed_by")
    counts = selectors.queue_counts_by_team(teams=mine) if len(mine) > 1 else []
    paginator = Paginator(documents, PER_PAGE)
    if counts and not (batch_id or rule):  # the teams' counts add up to the page's: not counted twice
        paginator.count = sum(t["n"] for t in counts if not team or t["id"] == team)
    page = paginator.get_page(request.GET.get("page"))
    rows = list(page.object_list)
    selectors.queue_rules_of(rows)
    now = timezone.now()
    for doc in rows:
        doc.claim_live = review.claim_is_live(doc, now=now)
        doc.claim_until = review.claim_expires_at(doc) if doc.claim_live else None
        doc.mine = doc.claim_live and doc.claimed_by_id == request.user.pk
    context = {
        "page": page, "rows": rows,
        "batches": scoped(Batch, user=request.user, roles=WORK_ROLES).filter(trial=False).order_by("-created_at")[:100],
        "batch_id": str(batch_id or ""), "rule": rule, "rules": selectors.queue_rule_codes(teams=teams),
        "team_counts": counts,
        "team": str(team or ""),
    }
    return render(request, "queue/list.html", context)


@require_POST
@role_required(REVIEWER, ADMIN)
def queue_next(request: HttpRequest) -> HttpResponse:
    """Claim the next document nobody holds (within the filters) and open it."""
    batch_id, rule = _filters(request.POST)
    document = review.document_next(user=request.user, batch_id=batch_id, rule=rule)
    if document is None:
        messages.info(request, "Nothing left to review.")
        url = reverse("queue")
    else:
        url = reverse("desk_document", args=[document.id])
    if request.htmx:
        return HttpResponseClientRedirect(url)
    return redirect(url)
