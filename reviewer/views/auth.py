from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse

from reviewer.throttle import login_blocked, login_failed, login_succeeded


def _address(request: HttpRequest) -> str:
    return request.META.get("REMOTE_ADDR", "")


class ThrottledLoginView(auth_views.LoginView):
    template_name = "auth/login.html"
    redirect_authenticated_user = True

    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        username = request.POST.get("username", "")
        if login_blocked(username=username, address=_address(request)):
            form = self.get_form()
            form.errors.clear()
            context = self.get_context_data(form=form, throttled=True)
            return self.render_to_response(context, status=429)
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form):
        login_failed(username=self.request.POST.get("username", ""), address=_address(self.request))
        return super().form_invalid(form)

    def form_valid(self, form):
        login_succeeded(username=form.get_user().get_username(), address=_address(self.request))
        return super().form_valid(form)


login = ThrottledLoginView.as_view()
