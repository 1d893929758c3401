using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Documents.Commands;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Tests.Infrastructure;

/// <summary>
/// Puts and deletes attachments through the database's own API (upload, then the merged command), as
/// the HTTP handler does, for tests of the features attachments travel with; reads them back from a
/// snapshot.
/// </summary>
public static class DirectAttachments
{
    public static DocumentDatabase Database(InProcessServer server, string db) => server.Host.Server.Databases.GetDatabase(db);

    public static async Task<AttachmentPutResult> PutAsync(InProcessServer server, string db, string id, string name, byte[] content, string contentType = "text/plain")
    {
        var database = Database(server, db);
        var source = await AttachmentUpload.ReadAsync(database, new MemoryStream(content), long.MaxValue, "test", CancellationToken.None);
        using var context = new JsonOperationContext();
        var command = new PutAttachmentCommand(id, name, contentType, source, null, context);
        await database.EnqueueAsync(command);
        return command.Result;
    }

    public static async Task<bool> DeleteAsync(InProcessServer server, string db, string id, string name)
    {
        using var context = new JsonOperationContext();
        var command = new DeleteAttachmentCommand(id, name, null, context);
        await Database(server, db).EnqueueAsync(command);
        return command.Deleted;
    }

    /// <summary>The attachments of a document with their contents, as the database holds them now.</summary>
    public static List<(AttachmentInfo Info, byte[] Content)> Read(InProcessServer server, string db, string id)
    {
        using var reader = Database(server, db).BeginRead();
        var result = new List<(AttachmentInfo, byte[])>();
        foreach (var info in reader.GetAttachments(id))
        {
            using var stream = reader.OpenAttachment(id, info.Name)!;
            var content = new byte[stream.Length];
            stream.ReadExactly(content);
            result.Add((info, content));
        }
        return result;
    }

    public static AttachmentStorageStats Stats(InProcessServer server, string db)
    {
        using var reader = Database(server, db).BeginRead();
        return reader.GetAttachmentStorageStats();
    }

    /// <summary>The reference count of a content by its base64 hash; 0 when it is not stored.</summary>
    public static long References(InProcessServer server, string db, string hash)
    {
        using var reader = Database(server, db).BeginRead();
        return reader.GetAttachmentContent(hash)?.References ?? 0;
    }
}
