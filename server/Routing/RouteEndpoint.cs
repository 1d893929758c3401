namespace Jackdaw.Server.Routing;

/// <summary>A route template and the handler declared for each method on it.</summary>
public sealed class RouteEndpoint<THandler>
    where THandler : class
{
    private readonly THandler?[] _handlers = new THandler?[HttpMethodKinds.Count];

    internal RouteEndpoint(string template, int id)
    {
        Template = template;
        Id = id;
    }

    public string Template { get; }

    /// <summary>
    /// The endpoint's number in its router, from 0 to the count of endpoints less one: an index into
    /// arrays of per-route state (the request metrics' precomputed tags), so that a request finds its
    /// own without a lookup.
    /// </summary>
    public int Id { get; }

    /// <summary>The value of the <c>Allow</c> header for a 405 on this route, e.g. <c>GET, HEAD, PUT</c>.</summary>
    public string Allow { get; private set; } = string.Empty;

    /// <summary>
    /// The handler for <paramref name="method"/>, or null (a 405). HEAD falls back to the GET
    /// handler, as HTTP requires; Kestrel drops the body of a HEAD response.
    /// </summary>
    public THandler? GetHandler(HttpMethodKind method)
    {
        if ((uint)method >= (uint)_handlers.Length)
        {
            return null;
        }
        var handler = _handlers[(int)method];
        if (handler is null && method == HttpMethodKind.Head)
        {
            handler = _handlers[(int)HttpMethodKind.Get];
        }
        return handler;
    }

    internal void Add(HttpMethodKind method, THandler handler)
    {
        if (_handlers[(int)method] is not null)
        {
            throw new InvalidOperationException($"Route '{HttpMethodKinds.ToName(method)} {Template}' is declared twice.");
        }
        _handlers[(int)method] = handler;
        var names = new List<string>();
        for (var i = 0; i < _handlers.Length; i++)
        {
            var kind = (HttpMethodKind)i;
            if (_handlers[i] is not null || (kind == HttpMethodKind.Head && _handlers[(int)HttpMethodKind.Get] is not null))
            {
                names.Add(HttpMethodKinds.ToName(kind));
            }
        }
        Allow = string.Join(", ", names);
    }
}
