namespace Jackdaw.Server.Routing;

/// <summary>The HTTP methods a route can be declared for. <see cref="Unknown"/> never has a handler.</summary>
public enum HttpMethodKind : byte
{
    Get,
    Head,
    Post,
    Put,
    Delete,
    Patch,
    Options,

    /// <summary>RavenDB's own verb: <c>RESET /databases/{db}/indexes?name=</c> rebuilds an index.</summary>
    Reset,
    Unknown,
}

public static class HttpMethodKinds
{
    public const int Count = (int)HttpMethodKind.Unknown;

    /// <summary>
    /// Maps a method string to its kind without allocating. Kestrel hands out interned method
    /// strings, so <see cref="string.Equals(string, string)"/> usually succeeds on the reference check.
    /// </summary>
    public static HttpMethodKind Parse(string method)
    {
        switch (method.Length)
        {
            case 3:
                if (string.Equals(method, "GET", StringComparison.Ordinal)) return HttpMethodKind.Get;
                if (string.Equals(method, "PUT", StringComparison.Ordinal)) return HttpMethodKind.Put;
                break;
            case 4:
                if (string.Equals(method, "POST", StringComparison.Ordinal)) return HttpMethodKind.Post;
                if (string.Equals(method, "HEAD", StringComparison.Ordinal)) return HttpMethodKind.Head;
                break;
            case 5:
                if (string.Equals(method, "PATCH", StringComparison.Ordinal)) return HttpMethodKind.Patch;
                if (string.Equals(method, "RESET", StringComparison.Ordinal)) return HttpMethodKind.Reset;
                break;
            case 6:
                if (string.Equals(method, "DELETE", StringComparison.Ordinal)) return HttpMethodKind.Delete;
                break;
            case 7:
                if (string.Equals(method, "OPTIONS", StringComparison.Ordinal)) return HttpMethodKind.Options;
                break;
        }
        return HttpMethodKind.Unknown;
    }

    public static string ToName(HttpMethodKind kind) => kind switch
    {
        HttpMethodKind.Get => "GET",
        HttpMethodKind.Head => "HEAD",
        HttpMethodKind.Post => "POST",
        HttpMethodKind.Put => "PUT",
        HttpMethodKind.Delete => "DELETE",
        HttpMethodKind.Patch => "PATCH",
        HttpMethodKind.Options => "OPTIONS",
        HttpMethodKind.Reset => "RESET",
        _ => throw new ArgumentOutOfRangeException(nameof(kind), kind, "Not a routable HTTP method."),
    };

    public static HttpMethodKind ParseDeclared(string method)
    {
        var kind = Parse(method.ToUpperInvariant());
        if (kind == HttpMethodKind.Unknown)
        {
            throw new ArgumentException($"'{method}' is not a routable HTTP method (use GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS or RESET).", nameof(method));
        }
        return kind;
    }
}
