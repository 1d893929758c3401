using System.Text;
using System.Text.Json;

namespace Jackdaw.Client.Queries;

/// <summary>
/// The server's answer to a query, read in one pass over its body:
/// <c>{"Results":[...],"Includes":{"id":{...}|null},"TotalResults":n,"SkippedResults":n,"IndexName":...,
/// "IsStale":...,"IndexTimestamp":...,"LastQueryTime":...,"ResultEtag":n,"NodeTag":...,"DurationInMs":n}</c>.
/// Each result is handed to a <see cref="ResultReader"/> as the reader reaches it, so it is
/// tokenized once, straight into the caller's object; included documents are ranges of <see cref="Body"/>.
/// </summary>
internal sealed class QueryAnswer
{
    private readonly ResultReader _readResult;
    private int _start;

    private QueryAnswer(ReadOnlyMemory<byte> body, ResultReader readResult)
    {
        Body = body;
        _readResult = readResult;
    }

    /// <summary>
    /// Reads one result, <paramref name="reader"/> (over all of <paramref name="buffer"/>) on its
    /// first token, and leaves the reader on its last token.
    /// </summary>
    public delegate void ResultReader(ref Utf8JsonReader reader, ReadOnlyMemory<byte> buffer);

    /// <summary>The answer's bytes: a whole response body, or one item of a <c>multi_get</c> answer.</summary>
    public ReadOnlyMemory<byte> Body { get; }

    /// <summary>Included documents by id; a null range is an id the server found no document for.</summary>
    public List<(string Id, Range? Document)> Includes { get; } = [];

    public long TotalResults { get; private set; }

    public long SkippedResults { get; private set; }

    public string? IndexName { get; private set; }

    public bool IsStale { get; private set; }

    public DateTime IndexTimestamp { get; private set; }

    public DateTime LastQueryTime { get; private set; }

    public long? ResultEtag { get; private set; }

    public string? NodeTag { get; private set; }

    public long DurationInMs { get; private set; }

    /// <exception cref="JackdawException">The body is not a query answer.</exception>
    public static QueryAnswer Parse(ReadOnlyMemory<byte> body, ResultReader readResult)
    {
        var reader = new Utf8JsonReader(body.Span);
        return Parse(body, ref reader, readResult);
    }

    /// <summary>
    /// Reads the answer whose first token <paramref name="reader"/> (over all of <paramref name="buffer"/>)
    /// is about to read, leaving it on the answer's last token: an answer inside a larger body (an
    /// item of a <c>multi_get</c>) is read in the same pass as the body. Ranges are in <paramref name="buffer"/>.
    /// </summary>
    /// <exception cref="JackdawException">The value is not a query answer.</exception>
    public static QueryAnswer Parse(ReadOnlyMemory<byte> buffer, ref Utf8JsonReader reader, ResultReader readResult)
    {
        var answer = new QueryAnswer(buffer, readResult);
        try
        {
            answer.Read(ref reader);
        }
        catch (JsonException e)
        {
            throw new JackdawException($"The server's answer to a query is not JSON: {e.Message}", e);
        }

        return answer;
    }

    public void FillStatistics(QueryStatistics statistics)
    {
        statistics.IsStale = IsStale;
        statistics.DurationInMs = DurationInMs;
        statistics.LongTotalResults = TotalResults;
        statistics.TotalResults = (int)Math.Min(TotalResults, int.MaxValue);
        statistics.SkippedResults = (int)Math.Min(SkippedResults, int.MaxValue);
        statistics.IndexName = IndexName;
        statistics.IndexTimestamp = IndexTimestamp;
        statistics.LastQueryTime = LastQueryTime;
        statistics.ResultEtag = ResultEtag;
        statistics.NodeTag = NodeTag;
        statistics.Timestamp = DateTime.UtcNow;
    }

    private void Read(ref Utf8JsonReader reader)
    {
        _start = reader.TokenType == JsonTokenType.None ? 0 : (int)reader.TokenStartIndex;
        if (reader.TokenType == JsonTokenType.None && !reader.Read() || reader.TokenType != JsonTokenType.StartObject)
        {
            ThrowUnexpected("it is not a JSON object");
        }

        var sawResults = false;
        while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
        {
            if (reader.ValueTextEquals("Results"u8))
            {
                reader.Read();
                ReadResults(ref reader);
                sawResults = true;
            }
            else if (reader.ValueTextEquals("Includes"u8))
            {
                reader.Read();
                ReadIncludes(ref reader, Includes);
            }
            else if (reader.ValueTextEquals("TotalResults"u8))
            {
                TotalResults = ReadInt64(ref reader);
            }
            else if (reader.ValueTextEquals("SkippedResults"u8))
            {
                SkippedResults = ReadInt64(ref reader);
            }
            else if (reader.ValueTextEquals("ResultEtag"u8))
            {
                ResultEtag = ReadInt64(ref reader);
            }
            else if (reader.ValueTextEquals("DurationInMs"u8))
            {
                DurationInMs = ReadInt64(ref reader);
            }
            else if (reader.ValueTextEquals("IsStale"u8))
            {
                reader.Read();
                IsStale = reader.TokenType == JsonTokenType.True;
            }
            else if (reader.ValueTextEquals("IndexName"u8))
            {
                IndexName = ReadString(ref reader);
            }
            else if (reader.ValueTextEquals("NodeTag"u8))
            {
                NodeTag = ReadString(ref reader);
            }
            else if (reader.ValueTextEquals("IndexTimestamp"u8))
            {
                IndexTimestamp = ReadDateTime(ref reader);
            }
            else if (reader.ValueTextEquals("LastQueryTime"u8))
            {
                LastQueryTime = ReadDateTime(ref reader);
            }
            else
            {
                reader.Read();
                reader.Skip();
            }
        }

        if (!sawResults)
        {
            ThrowUnexpected("it has no \"Results\" array");
        }
    }

    private void ReadResults(ref Utf8JsonReader reader)
    {
        if (reader.TokenType != JsonTokenType.StartArray)
        {
            ThrowUnexpected("\"Results\" is not an array");
        }

        while (reader.Read() && reader.TokenType != JsonTokenType.EndArray)
        {
            _readResult(ref reader, Body);
        }
    }

    /// <summary>
    /// Reads <c>{"id":document|null,...}</c> (<paramref name="reader"/> on its first token, left on
    /// its last) into <paramref name="includes"/>, as ranges of the buffer the reader reads; anything
    /// but an object is skipped. Loads by id answer their includes in the same shape.
    /// </summary>
    internal static void ReadIncludes(ref Utf8JsonReader reader, List<(string Id, Range? Document)> includes)
    {
        if (reader.TokenType != JsonTokenType.StartObject)
        {
            reader.Skip();
            return;
        }

        while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
        {
            var id = reader.GetString()!;
            reader.Read();
            if (reader.TokenType == JsonTokenType.StartObject)
            {
                var start = (int)reader.TokenStartIndex;
                reader.Skip();
                includes.Add((id, start..(int)reader.BytesConsumed));
            }
            else
            {
                reader.Skip();
                includes.Add((id, null));
            }
        }
    }

    private static long ReadInt64(ref Utf8JsonReader reader)
    {
        reader.Read();
        return reader.TokenType == JsonTokenType.Number && reader.TryGetInt64(out var value) ? value : 0;
    }

    private static string? ReadString(ref Utf8JsonReader reader)
    {
        reader.Read();
        return reader.TokenType == JsonTokenType.String ? reader.GetString() : null;
    }

    private static DateTime ReadDateTime(ref Utf8JsonReader reader)
    {
        reader.Read();
        return reader.TokenType == JsonTokenType.String && reader.TryGetDateTime(out var value) ? value.ToUniversalTime() : default;
    }

    private void ThrowUnexpected(string problem)
    {
        var rest = Body.Span[_start..];
        var text = Encoding.UTF8.GetString(rest[..Math.Min(rest.Length, 200)]);
        throw new JackdawException($"The server's answer to a query is not a query result ({problem}): {text}{(rest.Length > 200 ? "..." : "")}");
    }
}
