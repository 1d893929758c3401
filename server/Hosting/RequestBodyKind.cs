namespace Jackdaw.Server.Hosting;

/// <summary>
/// Which body limit of <see cref="ServerLimits"/> a request is held to. A handler whose route
/// takes a larger body than most says so with <see cref="RequestContext.LimitBody"/> before it
/// reads the body; every other route's body is an <see cref="Other"/>.
/// </summary>
public enum RequestBodyKind
{
    /// <summary>Queries, index definitions, ids, subscriptions, admin: <c>Limits:MaxOtherBodySize</c>.</summary>
    Other,

    /// <summary>One document (<c>PUT /databases/*/docs</c>), and each line of a bulk insert: <c>Limits:MaxDocumentBodySize</c>.</summary>
    Document,

    /// <summary>A batch read whole (<c>bulk_docs</c>, <c>multi_get</c>): <c>Limits:MaxBatchBodySize</c>.</summary>
    Batch,

    /// <summary>A bulk insert's stream, committed as it comes: <c>Limits:MaxBulkInsertBodySize</c>.</summary>
    BulkInsert,
}
