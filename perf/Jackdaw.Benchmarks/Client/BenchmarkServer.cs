using System.IO.Compression;
using System.Text;
using System.Text.Json;
using Jackdaw.Server.Hosting;
using Microsoft.Extensions.Logging;

namespace Jackdaw.Benchmarks.Client;

/// <summary>The real server in the benchmark process (127.0.0.1, port 0, temp data folder), quiet logging.</summary>
internal sealed class BenchmarkServer : IAsyncDisposable
{
    private readonly string _dataDir;

    private BenchmarkServer(JackdawHost host, string dataDir)
    {
        Host = host;
        _dataDir = dataDir;
    }

    public JackdawHost Host { get; }

    public string Url => Host.Urls.Single();

    public static async Task<BenchmarkServer> StartAsync()
    {
        var dataDir = Path.Combine(Path.GetTempPath(), $"jackdaw-bench-client-{Guid.NewGuid():N}");
        Directory.CreateDirectory(dataDir);
        var host = JackdawHost.Create(["--urls", "http://127.0.0.1:0", "--data-dir", dataDir], builder => builder.Logging.ClearProviders());
        await host.StartAsync();
        return new BenchmarkServer(host, dataDir);
    }

    public async ValueTask DisposeAsync()
    {
        await Host.DisposeAsync();
        Directory.Delete(_dataDir, recursive: true);
    }
}

/// <summary>The 100,000 orders of ../shared/data/orders.jsonl.gz.</summary>
internal static class OrdersCorpus
{
    public static string Path
    {
        get
        {
            for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
            {
                var candidate = System.IO.Path.Combine(dir.FullName, "..", "shared", "data", "orders.jsonl.gz");
                if (File.Exists(candidate))
                    return System.IO.Path.GetFullPath(candidate);
            }

            return "/work/shared/data/orders.jsonl.gz";
        }
    }

    /// <summary>Each order as an application object, with its id from <c>@metadata.@id</c>, and its raw JSON line.</summary>
    public static List<(Order Order, string Line)> Read(JsonSerializerOptions options)
    {
        var result = new List<(Order, string)>(100_000);
        using var file = File.OpenRead(Path);
        using var gzip = new GZipStream(file, CompressionMode.Decompress);
        using var reader = new StreamReader(gzip, Encoding.UTF8);
        while (reader.ReadLine() is { } line)
        {
            if (line.Length == 0)
                continue;
            var order = JsonSerializer.Deserialize<Order>(line, options)!;
            var at = line.LastIndexOf("\"@id\":\"", StringComparison.Ordinal) + 7;
            order.Id = line[at..line.IndexOf('"', at)];
            result.Add((order, line));
        }

        return result;
    }
}

public sealed class Order
{
    public string? Id { get; set; }

    public string Company { get; set; } = "";

    public string Employee { get; set; } = "";

    public DateTime OrderedAt { get; set; }

    public DateTime RequireAt { get; set; }

    public DateTime? ShippedAt { get; set; }

    public ShipAddress ShipTo { get; set; } = new();

    public string ShipVia { get; set; } = "";

    public decimal Freight { get; set; }

    public bool Valid { get; set; }

    public List<OrderLine> Lines { get; set; } = [];
}

public sealed class ShipAddress
{
    public string City { get; set; } = "";

    public string Country { get; set; } = "";

    public string PostalCode { get; set; } = "";
}

public sealed class OrderLine
{
    public string Product { get; set; } = "";

    public string ProductName { get; set; } = "";

    public decimal PricePerUnit { get; set; }

    public int Quantity { get; set; }

    public decimal Discount { get; set; }
}
