using Jackdaw.Server.Hosting;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// Base of the handler classes: one per resource, created once at startup with the server
/// context; their <c>[Route]</c> methods are bound to <see cref="RequestHandler"/> delegates.
/// Handler methods must be thread-safe: one instance serves all requests.
/// </summary>
public abstract class HandlerBase(ServerContext server)
{
    protected ServerContext Server { get; } = server;
}
