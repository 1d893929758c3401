namespace Jackdaw.Client;

/// <summary>
/// A LINQ query over a collection or an index, from <see cref="IAsyncDocumentSession.Query{T}"/>.
/// Compose it with <c>Where</c>, <c>OrderBy</c>, <c>Select</c>, <c>Skip</c>, <c>Take</c> and the
/// extensions of <see cref="JackdawQueryableExtensions"/>, then run it with an async method such as
/// <see cref="JackdawQueryableExtensions.ToListAsync{T}"/>. Enumerating it synchronously throws
/// <see cref="NotSupportedException"/>: every query is a request, and requests are async.
/// <see cref="object.ToString"/> gives the RQL it sends.
/// </summary>
public interface IJackdawQueryable<T> : IOrderedQueryable<T>
{
}
