using System.Buffers;
using System.Text.Encodings.Web;
using System.Text.Json;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Queries;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Wire;

/// <summary>
/// A query's or a load's <c>,"RevisionIncludes":[…]</c>, as RavenDB's clients register them: for a change
/// vector <c>{"Id","ChangeVector","Before":null,"Revision":{…}}</c>, for a point in time
/// <c>{"Id","ChangeVector","Before":"…Z","Revision":{…}}</c>. What has no revision is left out.
/// </summary>
public static class RevisionIncludesWriter
{
    public static void Write(IBufferWriter<byte> output, DocumentsReader reader, RevisionIncludes revisions)
    {
        output.Write(",\"RevisionIncludes\":["u8);
        using var context = new JsonOperationContext();
        var revisionWriter = new RevisionResultsWriter(context);
        var first = true;
        foreach (var changeVector in revisions.ChangeVectors)
        {
            if (reader.GetRevisionKey(changeVector) is { } key && reader.TryGetRevisionByKey(key, out var revision))
            {
                WriteEntry(output, revisionWriter, revision, null, ref first);
            }
        }
        foreach (var (id, before) in revisions.Before)
        {
            if (reader.GetRevisionKeyBefore(id, before) is { } key && reader.TryGetRevisionByKey(key, out var revision))
            {
                WriteEntry(output, revisionWriter, revision, before, ref first);
            }
        }
        output.Write("]"u8);
    }

    private static void WriteEntry(IBufferWriter<byte> output, RevisionResultsWriter revisionWriter, RevisionRecord revision, DateTime? before, ref bool first)
    {
        if (!first)
        {
            output.Write(","u8);
        }
        first = false;
        output.Write("{\"Id\":"u8);
        WriteString(output, revision.Id);
        output.Write(",\"ChangeVector\":"u8);
        WriteString(output, revision.ChangeVector);
        output.Write(",\"Before\":"u8);
        if (before is { } at)
        {
            WriteString(output, JsonDefaults.FormatTime(at));
        }
        else
        {
            output.Write("null"u8);
        }
        output.Write(",\"Revision\":"u8);
        revisionWriter.Write(revision, output, metadataOnly: false);
        output.Write("}"u8);
    }

    private static void WriteString(IBufferWriter<byte> output, string value)
    {
        output.Write("\""u8);
        output.Write(JsonEncodedText.Encode(value, JavaScriptEncoder.UnsafeRelaxedJsonEscaping).EncodedUtf8Bytes);
        output.Write("\""u8);
    }
}
