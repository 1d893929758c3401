namespace Jackdaw.Server.Hosting;

/// <summary>
/// <c>Jackdaw.Server healthcheck [url]</c>: exits 0 when the server answers 200, else 1. For
/// container health checks in images that have no curl or wget.
/// </summary>
public static class HealthCheck
{
    public static async Task<int> RunAsync(string url)
    {
        try
        {
            using var client = new HttpClient { Timeout = TimeSpan.FromSeconds(4) };
            using var response = await client.GetAsync(new Uri(url)).ConfigureAwait(false);
            if (response.IsSuccessStatusCode)
                return 0;
            await Console.Error.WriteLineAsync($"unhealthy: {url} answered {(int)response.StatusCode}").ConfigureAwait(false);
            return 1;
        }
        catch (Exception e) when (e is HttpRequestException or TaskCanceledException or UriFormatException)
        {
            await Console.Error.WriteLineAsync($"unhealthy: {url}: {e.Message}").ConfigureAwait(false);
            return 1;
        }
    }
}
