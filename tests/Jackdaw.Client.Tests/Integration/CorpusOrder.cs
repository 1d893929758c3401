using System.IO.Compression;
using System.Text;
using System.Text.Json;

namespace Jackdaw.Client.Tests.Integration;

/// <summary>
/// An order of the test corpus (tests/corpus/orders.jsonl.gz), as an application would declare it.
/// Also compiled into perf/Jackdaw.Benchmarks (linked), so tests and benchmarks load the same model.
/// </summary>
public sealed class CorpusOrder
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

    public List<CorpusOrderLine> Lines { get; set; } = [];

    public static string CorpusPath
    {
        get
        {
            var fromEnvironment = Environment.GetEnvironmentVariable("JACKDAW_CORPUS");
            if (!string.IsNullOrEmpty(fromEnvironment))
            {
                return Path.Combine(fromEnvironment, "orders.jsonl.gz");
            }

            // The tests run from tests/Jackdaw.Client.Tests/bin/<config>/net10.0, inside the repository.
            for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
            {
                var candidate = Path.Combine(dir.FullName, "tests", "corpus", "orders.jsonl.gz");
                if (File.Exists(candidate))
                {
                    return candidate;
                }
            }

            throw new InvalidOperationException(
                $"Corpus not found: no tests/corpus above {AppContext.BaseDirectory}; set JACKDAW_CORPUS to a folder holding orders.jsonl.gz.");
        }
    }

    /// <summary>The corpus orders with their ids from <c>@metadata.@id</c>, read line by line.</summary>
    public static IEnumerable<CorpusOrder> ReadCorpus(JsonSerializerOptions options) =>
        ReadCorpusWithLines(options).Select(entry => entry.Order);

    /// <summary>Each corpus order with its raw JSON line (the benchmarks post both forms).</summary>
    public static IEnumerable<(CorpusOrder Order, string Line)> ReadCorpusWithLines(JsonSerializerOptions options)
    {
        using var file = File.OpenRead(CorpusPath);
        using var gzip = new GZipStream(file, CompressionMode.Decompress);
        using var reader = new StreamReader(gzip, Encoding.UTF8);
        while (reader.ReadLine() is { } line)
        {
            if (line.Length == 0)
            {
                continue;
            }
            var order = JsonSerializer.Deserialize<CorpusOrder>(line, options)!;
            var at = line.LastIndexOf("\"@id\":\"", StringComparison.Ordinal) + 7;
            order.Id = line[at..line.IndexOf('"', at)];
            yield return (order, line);
        }
    }
}

public sealed class ShipAddress
{
    public string City { get; set; } = "";

    public string Country { get; set; } = "";

    public string PostalCode { get; set; } = "";
}

public sealed class CorpusOrderLine
{
    public string Product { get; set; } = "";

    public string ProductName { get; set; } = "";

    public decimal PricePerUnit { get; set; }

    public int Quantity { get; set; }

    public decimal Discount { get; set; }
}
