namespace Jackdaw.Client.Http;

/// <summary>
/// One request of a <c>multi_get</c> (RavenDB's name): <paramref name="Url"/> relative to the
/// database (<c>/docs</c>), <paramref name="Query"/> empty or starting with <c>?</c>, and a JSON
/// <paramref name="Content"/> (empty for none).
/// </summary>
internal readonly record struct GetRequest(string Url, string Query, string Method, ReadOnlyMemory<byte> Content);
