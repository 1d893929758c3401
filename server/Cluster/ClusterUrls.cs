namespace Jackdaw.Server.Cluster;

/// <summary>Node URLs as the cluster stores and compares them: absolute http(s), no trailing slash, no path.</summary>
public static class ClusterUrls
{
    /// <summary>The URL in its stored form, or null when it is not an absolute http or https URL without a path or query.</summary>
    public static string? Normalize(string? url)
    {
        if (string.IsNullOrWhiteSpace(url) || !Uri.TryCreate(url.Trim(), UriKind.Absolute, out var uri)
            || uri.Scheme is not ("http" or "https") || uri.AbsolutePath is not ("/" or "") || uri.Query.Length > 0 || uri.Port == 0)
        {
            return null;
        }
        return uri.GetLeftPart(UriPartial.Authority).ToLowerInvariant();
    }

    public static bool Same(string a, string b) =>
        string.Equals(Normalize(a) ?? a, Normalize(b) ?? b, StringComparison.OrdinalIgnoreCase);
}
