"""Refit a document type's field confidence model on the fields people judged; show old against new first."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from extraction.doctypes.registry import DOCTYPE_CHOICES
from reviewer.confidence.services import NotEnoughLabels, confidence_model_save, confidence_refit


def _fmt(metrics: dict) -> str:
    def num(key: str) -> str:
        value = metrics.get(key)
        return "—" if value is None else f"{value:.3f}"

    return (f"{metrics.get('fields', 0)} held-back fields ({metrics.get('wrong', 0)} wrong): "
            f"AUROC {num('auroc')}, Brier {num('brier')}, ECE {num('ece')}")


class Command(BaseCommand):
    help = ("Fit a new confidence model for a document type and compare it with the one in use on held-back "
            "judged fields. Nothing changes without --save.")

    def add_arguments(self, parser):
        parser.add_argument("--type", required=True, choices=[c for c, _ in DOCTYPE_CHOICES], dest="doctype")
        parser.add_argument("--save", action="store_true", help="store the new model as the next version")
        parser.add_argument("--note", default="", help="why this version (kept with it)")

    def handle(self, *args, doctype, save, note, **options):
        try:
            refit = confidence_refit(doctype=doctype)
        except NotEnoughLabels as err:
            raise CommandError(str(err)) from None
        self.stdout.write(f"{doctype}: fitted on {refit.labels} judged fields")
        self.stdout.write(f"  in use  v{refit.old_version}: {_fmt(refit.old_metrics)}")
        self.stdout.write(f"  refit   v{refit.new_version}: {_fmt(refit.new_metrics)}")
        if not save:
            self.stdout.write("Not saved: run again with --save to use the refit (fields scored from then on).")
            return
        row = confidence_model_save(refit=refit, note=note)
        self.stdout.write(f"Saved {doctype} confidence v{row.version}; fields are scored with it from now on.")
