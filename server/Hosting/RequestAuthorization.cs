using Jackdaw.Server.Errors;
using Jackdaw.Server.Security;

namespace Jackdaw.Server.Hosting;

/// <summary>
/// On a secured server, each handler is bound behind its route's check: the connection's client
/// certificate is identified (once per connection, see <see cref="ConnectionIdentity"/>) and held
/// against the route's <see cref="RouteAccess"/> and the database in its path, before the handler
/// (or a WebSocket upgrade) runs. An unsecured server binds the handlers bare: no cost at all.
/// </summary>
internal static class RequestAuthorization
{
    public static RequestHandler Wrap(RequestHandler handler, RouteAccess access, string template, Authorizer authorizer)
    {
        if (access == RouteAccess.Unauthenticated)
        {
            return handler;
        }
        var database = access.IsDatabaseAccess();
        if (database && !template.StartsWith("/databases/*/", StringComparison.Ordinal))
        {
            throw new InvalidOperationException($"Route '{template}' needs {access} but names no database (/databases/*/...).");
        }
        return context =>
        {
            var http = context.HttpContext;
            var caller = authorizer.Identify(http.Connection.ClientCertificate, http.Features.Get<TlsConnection>()?.Identity, out var denied);
            if (caller is not null)
            {
                denied = Authorizer.Authorize(caller, access, database ? context.GetCapture(0) : default);
            }
            if (denied is not null)
            {
                return ValueTask.FromException(new AuthorizationException(denied.NotAuthenticated, denied.Message));
            }
            context.Caller = caller;
            return handler(context);
        };
    }
}
