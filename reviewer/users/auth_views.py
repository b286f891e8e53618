from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse

from reviewer.client_address import client_address
from reviewer.users.throttle import DEVICE_COOKIE, login_attempt_start, login_attempt_succeeded


class ThrottledLoginView(auth_views.LoginView):
    """Django's login view; every POST first takes its slot in the throttle (reviewer.users.throttle)."""

    template_name = "auth/login.html"
    redirect_authenticated_user = True

    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        self.attempt = login_attempt_start(username=request.POST.get("username", ""),
                                           address=client_address(request),
                                           device_cookie=request.COOKIES.get(DEVICE_COOKIE))
        if self.attempt is None:
            # An unbound form: a bound one would check the password while rendering its errors.
            form = self.get_form_class()(request, initial={"username": request.POST.get("username", "")[:150]})
            context = self.get_context_data(form=form, throttled=True)
            return self.render_to_response(context, status=429)
        return super().post(request, *args, **kwargs)

    def form_valid(self, form):
        response = super().form_valid(form)
        login_attempt_succeeded(attempt=self.attempt, username=self.request.POST.get("username", ""),
                                response=response)
        return response


login = ThrottledLoginView.as_view()
