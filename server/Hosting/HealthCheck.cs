using System.Text.RegularExpressions;

namespace Jackdaw.Server.Hosting;

/// <summary>
/// <c>Jackdaw.Server healthcheck [url]</c>: exits 0 when the server answers 200, else 1. For
/// container health checks in images that have no curl or wget.
/// </summary>
public static partial class HealthCheck
{
    public static async Task<int> RunAsync(string url)
    {
        try
        {
            var uri = new Uri(url);
            using var handler = new SocketsHttpHandler();
            if (AcceptsAnyServerCertificate(uri))
            {
                handler.SslOptions.RemoteCertificateValidationCallback = static (_, _, _, _) => true;
            }
            using var client = new HttpClient(handler) { Timeout = TimeSpan.FromSeconds(4) };
            using var response = await client.GetAsync(uri).ConfigureAwait(false);
            if (response.IsSuccessStatusCode)
            {
                return 0;
            }
            await Console.Error.WriteLineAsync($"unhealthy: {url} answered {(int)response.StatusCode}").ConfigureAwait(false);
            return 1;
        }
        catch (Exception e) when (e is HttpRequestException or TaskCanceledException or UriFormatException)
        {
            await Console.Error.WriteLineAsync($"unhealthy: {url}: {e.Message}").ConfigureAwait(false);
            return 1;
        }
    }

    /// <summary>
    /// True for an https URL on loopback: the check then takes whatever certificate the server
    /// presents. A secured server's certificate names its public address, not 127.0.0.1, and is
    /// often signed by a private CA the container does not trust, so checking the chain would call a
    /// healthy server unhealthy. Skipping it is safe here: the check only asks whether the server
    /// answers, it sends nothing secret (no client certificate, no credentials, a GET of a public
    /// page) and believes nothing it reads beyond the status, and a loopback connection never leaves
    /// the machine, so whoever could stand in the middle is on it already. Any other https URL is
    /// checked as usual.
    /// </summary>
    public static bool AcceptsAnyServerCertificate(Uri url) =>
        url.Scheme == Uri.UriSchemeHttps && url.IsLoopback;

    /// <summary>
    /// The URL checked when none is given: <c>/build/version</c> on the first address the server is
    /// configured to listen on (<paramref name="configuredUrls"/>: <c>JACKDAW_URLS</c>, else
    /// <c>ASPNETCORE_URLS</c>), a host that means every interface (<c>0.0.0.0</c>, <c>[::]</c>,
    /// <c>*</c>, <c>+</c>) read as 127.0.0.1; without one, <c>http://127.0.0.1:8080/build/version</c>.
    /// So one container health check serves the secured image (https on 8443) and the unsecured one.
    /// </summary>
    public static string DefaultUrl(string? configuredUrls)
    {
        var first = configuredUrls?.Split(';', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries).FirstOrDefault();
        if (first is null)
        {
            return CommandLine.DefaultHealthCheckUrl;
        }
        var match = ListenUrl().Match(first);
        if (!match.Success)
        {
            return first;
        }
        var host = match.Groups["host"].Value is "0.0.0.0" or "[::]" or "*" or "+" ? "127.0.0.1" : match.Groups["host"].Value;
        return $"{match.Groups["scheme"].Value}://{host}{match.Groups["port"].Value}/build/version";
    }

    [GeneratedRegex(@"^(?<scheme>https?)://(?<host>\[[^\]]*\]|[^:/]+)(?<port>:\d+)?/?$", RegexOptions.IgnoreCase)]
    private static partial Regex ListenUrl();
}
