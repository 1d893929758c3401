using System.Text;
using Jackdaw.Client.Streaming;

namespace Jackdaw.Client.Tests;

/// <summary>
/// The client's incremental reading of a stream's answer: the same results and statistics however
/// the bytes arrive (split at every position, or a byte at a time), results larger than its
/// buffer, the server's in-stream error, and an answer cut short.
/// </summary>
public sealed class StreamAnswerReaderTests
{
    private const string QueryAnswer = """{"ResultEtag":-42,"IsStale":true,"IndexName":"Auto/Users/ByName","TotalResults":3,"IndexTimestamp":"2026-11-29T01:02:03.0000000Z","Extra":{"a":[1,2]},"Results":[{"Name":"a \"}]","@metadata":{"@id":"users/1"}},{"Name":"b"},{"N":[{},{"x":"]"}]}]}""";

    [Fact]
    public async Task TheResultsAndStatisticsAreTheSameWhereverTheAnswerIsSplit()
    {
        var bytes = Encoding.UTF8.GetBytes(QueryAnswer);
        var expected = await ReadAllAsync(new MemoryStream(bytes), new StreamQueryStatistics());
        Assert.Equal(["""{"Name":"a \"}]","@metadata":{"@id":"users/1"}}""", """{"Name":"b"}""", """{"N":[{},{"x":"]"}]}"""], expected.Results);
        Assert.Equal((-42L, true, "Auto/Users/ByName", 3, new DateTime(2026, 11, 29, 1, 2, 3, DateTimeKind.Utc)), expected.Statistics);

        for (var split = 1; split < bytes.Length; split++)
        {
            var read = await ReadAllAsync(new SplitStream(bytes, split), new StreamQueryStatistics());
            Assert.Equal(expected.Results, read.Results);
            Assert.Equal(expected.Statistics, read.Statistics);
        }

        var trickled = await ReadAllAsync(new SplitStream(bytes, 1, everyByte: true), new StreamQueryStatistics());
        Assert.Equal(expected.Results, trickled.Results);
        Assert.Equal(expected.Statistics, trickled.Statistics);
    }

    [Fact]
    public async Task AResultLargerThanTheBufferIsReadWhole()
    {
        var large = "{\"Text\":\"" + new string('x', 300_000) + "\"}";
        var bytes = Encoding.UTF8.GetBytes("{\"Results\":[" + large + ",{}]}");

        var read = await ReadAllAsync(new SplitStream(bytes, 7000, everyByte: false, chunk: 7000), null);

        Assert.Equal([large, "{}"], read.Results);
    }

    [Theory]
    [InlineData("""{"Results":[{"a":1}],"Error":"Database 'x' is unavailable"}""", "Database 'x' is unavailable")]
    [InlineData("""{"Error":"boom","Results":[]}""", "boom")]
    public async Task TheServersErrorInTheStreamIsThrown(string answer, string message)
    {
        var error = await Assert.ThrowsAsync<JackdawException>(() => ReadAllAsync(new MemoryStream(Encoding.UTF8.GetBytes(answer)), null));

        Assert.Contains(message, error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task EveryAnswerCutShortIsAnError()
    {
        var bytes = Encoding.UTF8.GetBytes(QueryAnswer);
        for (var length = 0; length < bytes.Length; length++)
        {
            var error = await Assert.ThrowsAsync<JackdawException>(() => ReadAllAsync(new MemoryStream(bytes, 0, length), new StreamQueryStatistics()));
            Assert.True(error.Message.Contains("ended before", StringComparison.Ordinal) || error.Message.Contains("not what a stream answers", StringComparison.Ordinal), $"{length}: {error.Message}");
        }
    }

    private static async Task<(List<string> Results, (long, bool, string?, int, DateTime) Statistics)> ReadAllAsync(Stream body, StreamQueryStatistics? statistics)
    {
        var results = new List<string>();
        await using var reader = new StreamAnswerReader(body);
        await reader.StartAsync(statistics, CancellationToken.None);
        while (await reader.NextAsync(CancellationToken.None) is { } result)
        {
            results.Add(Encoding.UTF8.GetString(result.Span));
        }

        return (results, statistics is null ? default : (statistics.ResultEtag, statistics.IsStale, statistics.IndexName, statistics.TotalResults, statistics.IndexTimestamp));
    }

    /// <summary>Gives the bytes in two reads split at a position, or a few bytes per read.</summary>
    private sealed class SplitStream(byte[] bytes, int split, bool everyByte = false, int chunk = 1) : Stream
    {
        private int _position;

        public override bool CanRead => true;

        public override bool CanSeek => false;

        public override bool CanWrite => false;

        public override long Length => bytes.Length;

        public override long Position { get => _position; set => throw new NotSupportedException(); }

        public override int Read(byte[] buffer, int offset, int count)
        {
            var end = everyByte || chunk > 1 ? _position + chunk : _position < split ? split : bytes.Length;
            var n = Math.Min(Math.Min(count, end - _position), bytes.Length - _position);
            Array.Copy(bytes, _position, buffer, offset, n);
            _position += n;
            return n;
        }

        public override void Flush()
        {
        }

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

        public override void SetLength(long value) => throw new NotSupportedException();

        public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();
    }
}
