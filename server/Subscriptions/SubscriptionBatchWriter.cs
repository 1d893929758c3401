using System.Buffers;
using System.Buffers.Text;
using System.Text.Encodings.Web;
using System.Text.Json;
using Jackdaw.Server.Queries;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Rql;

namespace Jackdaw.Server.Subscriptions;

/// <summary>
/// A subscription batch as the worker receives it:
/// <c>{"Type":"Batch","Items":[{"Id","Etag","ChangeVector","Data":{document with @metadata}}],"Includes":{...},"LastEtag":n}</c>
/// (<c>Data</c> is the projection when the query selects), written while the documents are read.
/// A connection has two, used in turn: one batch is sent while the next is written. The buffer is
/// kept between batches (a 16 MB batch is not allocated again for each), and given up when the
/// batches become much smaller than it.
/// </summary>
public sealed class SubscriptionBatchWriter(RqlQuery query) : ISubscriptionBatchWriter
{
    private const int InitialBytes = 64 * 1024;
    private readonly List<DocumentPath>? _includes = DocumentIncludes.PathsOf(query);
    private readonly HashSet<string>? _included = query.Include.Count == 0 ? null : new HashSet<string>(StringComparer.OrdinalIgnoreCase);
    private ArrayBufferWriter<byte> _output = new(InitialBytes);
    private bool _first;
    private int _lastBatchBytes;

    public void Start()
    {
        // A buffer grown by one big batch goes when the last finished batch used less than an
        // eighth of it (a look for new documents that found none does not count).
        if (_output.Capacity > 1024 * 1024 && _lastBatchBytes < _output.Capacity / 8)
        {
            _output = new ArrayBufferWriter<byte>(Math.Max(InitialBytes, _lastBatchBytes * 2));
        }
        else
        {
            _output.ResetWrittenCount();
        }
        _included?.Clear();
        _output.Write("{\"Type\":\"Batch\",\"Items\":["u8);
        _first = true;
    }

    public void Add(string id, long etag, ReadOnlySpan<byte> document)
    {
        var output = _output;
        output.Write(_first ? "{\"Id\":\""u8 : ",{\"Id\":\""u8);
        _first = false;
        output.Write(JsonEncodedText.Encode(id, JavaScriptEncoder.UnsafeRelaxedJsonEscaping).EncodedUtf8Bytes);
        output.Write("\",\"Etag\":"u8);
        WriteNumber(output, etag);
        output.Write(",\"ChangeVector\":\""u8);
        ChangeVectors.WriteOf(output, document);
        output.Write("\",\"Data\":"u8);
        QueryProjection.WriteResult(output, query, id, document, null, null);
        output.Write("}"u8);
        if (_included is not null)
        {
            DocumentIncludes.Collect(document, _includes!, _included);
        }
    }

    public ReadOnlyMemory<byte> Finish(long lastEtag, DocumentsReader reader)
    {
        var output = _output;
        output.Write("],\"Includes\":"u8);
        if (_included is null)
        {
            output.Write("{}"u8);
        }
        else
        {
            DocumentIncludes.Write(output, reader, _included);
        }
        output.Write(",\"LastEtag\":"u8);
        WriteNumber(output, lastEtag);
        output.Write("}"u8);
        _lastBatchBytes = output.WrittenCount;
        return output.WrittenMemory;
    }

    private static void WriteNumber(ArrayBufferWriter<byte> output, long value)
    {
        Utf8Formatter.TryFormat(value, output.GetSpan(20), out var written);
        output.Advance(written);
    }
}
