// HTTP client, process CPU and command-line options.
using System.Buffers.Text;
using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.WebSockets;
using System.Text;
using System.Text.Json;

internal static class Http
{
    public static HttpClient Client(int connections) => new(new SocketsHttpHandler
    {
        MaxConnectionsPerServer = connections,
        UseProxy = false,
        AllowAutoRedirect = false,
        AutomaticDecompression = DecompressionMethods.None,
        PooledConnectionLifetime = Timeout.InfiniteTimeSpan,
        PooledConnectionIdleTimeout = TimeSpan.FromMinutes(5),
    })
    { Timeout = TimeSpan.FromMinutes(5) };

    public static async Task Ensure(HttpResponseMessage response, string what)
    {
        if (!response.IsSuccessStatusCode)
        {
            throw new InvalidOperationException($"{what}: {(int)response.StatusCode} {await response.Content.ReadAsStringAsync()}");
        }
    }
}

/// <summary>CPU time (user + system, seconds) of a process, from /proc (Linux).</summary>
internal static class ProcessCpu
{
    private const double TicksPerSecond = 100; // USER_HZ

    public static double Seconds(int pid)
    {
        if (pid == 0)
        {
            return 0;
        }
        try
        {
            var stat = File.ReadAllText($"/proc/{pid}/stat");
            var fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
            return (long.Parse(fields[11], CultureInfo.InvariantCulture) + long.Parse(fields[12], CultureInfo.InvariantCulture)) / TicksPerSecond;
        }
        catch (IOException)
        {
            return 0;
        }
    }
}

internal sealed class Options
{
    private readonly Dictionary<string, string> _values = [];

    public static Options Parse(string[] args)
    {
        var options = new Options();
        for (var i = 0; i + 1 < args.Length; i += 2)
        {
            if (!args[i].StartsWith("--", StringComparison.Ordinal))
            {
                throw new ArgumentException($"expected --name value, got '{args[i]}'");
            }
            options._values[args[i][2..]] = args[i + 1];
        }
        return options;
    }

    public string? TryGet(string name) => _values.TryGetValue(name, out var value) ? value : null;

    public string Require(string name) => _values.TryGetValue(name, out var value) ? value : throw new ArgumentException($"--{name} is required");

    public int GetInt(string name, int fallback) => _values.TryGetValue(name, out var value) ? int.Parse(value, CultureInfo.InvariantCulture) : fallback;

    public double GetDouble(string name, double fallback) => _values.TryGetValue(name, out var value) ? double.Parse(value, CultureInfo.InvariantCulture) : fallback;
}
