using System.Text;
using System.Text.Json;
using BenchmarkDotNet.Attributes;
using Jackdaw.Client;
using Jackdaw.Client.Streaming;
using Jackdaw.Client.Tests.Integration;

namespace Jackdaw.Benchmarks.Client;

/// <summary>
/// The client's side of a stream alone: a query stream's answer of the 100,000 corpus orders (as
/// the server writes it), in memory, read by <see cref="StreamAnswerReader"/> result by result,
/// each deserialized into a <see cref="CorpusOrder"/>, against System.Text.Json deserializing the
/// whole answer at once (which needs it whole in memory). Mean is per document.
/// </summary>
[MemoryDiagnoser]
public class StreamAnswerReaderBenchmarks
{
    private const int Documents = 100_000;
    private byte[] _answer = [];
    private JsonSerializerOptions _options = null!;

    [GlobalSetup]
    public void Setup()
    {
        _options = DocumentConventions.CreateDefaultSerializerOptions();
        var text = new StringBuilder("{\"ResultEtag\":1,\"IsStale\":false,\"IndexName\":\"collection/Orders\",\"TotalResults\":100000,\"IndexTimestamp\":\"2026-11-29T00:00:00.0000000Z\",\"Results\":[");
        var first = true;
        foreach (var (_, line) in CorpusOrder.ReadCorpusWithLines(_options).Take(Documents))
        {
            text.Append(first ? "" : ",").Append(line);
            first = false;
        }
        _answer = Encoding.UTF8.GetBytes(text.Append("]}").ToString());
    }

    [Benchmark(Baseline = true, OperationsPerInvoke = Documents)]
    public decimal SystemTextJsonWholeAnswer()
    {
        var freight = 0m;
        foreach (var order in JsonSerializer.Deserialize<Answer>(_answer, _options)!.Results)
        {
            freight += order.Freight;
        }
        return freight;
    }

    [Benchmark(OperationsPerInvoke = Documents)]
    public async Task<decimal> StreamAnswerReaderEachResult()
    {
        var freight = 0m;
        await using var reader = new StreamAnswerReader(new MemoryStream(_answer, writable: false));
        await reader.StartAsync(new StreamQueryStatistics(), CancellationToken.None);
        while (await reader.NextAsync(CancellationToken.None) is { } result)
        {
            freight += JsonSerializer.Deserialize<CorpusOrder>(result.Span, _options)!.Freight;
        }
        return freight;
    }

    [Benchmark(OperationsPerInvoke = Documents)]
    public async Task<int> StreamAnswerReaderOnly()
    {
        var count = 0;
        await using var reader = new StreamAnswerReader(new MemoryStream(_answer, writable: false));
        await reader.StartAsync(null, CancellationToken.None);
        while (await reader.NextAsync(CancellationToken.None) is not null)
        {
            count++;
        }
        return count;
    }

    private sealed class Answer
    {
        public List<CorpusOrder> Results { get; set; } = [];
    }
}
