using System.Linq.Expressions;
using Jackdaw.Client.Session;

namespace Jackdaw.Client.Queries.Linq;

/// <summary>
/// Builds and runs the queries of one <c>session.Query&lt;T&gt;()</c>. Building is LINQ's own;
/// running is async only (<see cref="JackdawQueryableExtensions"/>): <see cref="Execute{TResult}"/>
/// and enumeration throw <see cref="NotSupportedException"/>, because each run is a request.
/// </summary>
internal sealed class JackdawQueryProvider(AsyncDocumentSession session, DocumentConventions conventions, string from, Type documentType) : IQueryProvider
{
    internal enum SingleResult
    {
        First,
        FirstOrDefault,
        Single,
        SingleOrDefault,
    }

    public IQueryable<TElement> CreateQuery<TElement>(Expression expression) => new JackdawQueryable<TElement>(this, expression);

    public IQueryable CreateQuery(Expression expression)
    {
        var elementType = expression.Type.GetInterfaces().Append(expression.Type)
            .First(i => i.IsGenericType && i.GetGenericTypeDefinition() == typeof(IQueryable<>)).GetGenericArguments()[0];
        return (IQueryable)Activator.CreateInstance(typeof(JackdawQueryable<>).MakeGenericType(elementType), this, expression)!;
    }

    public TResult Execute<TResult>(Expression expression) => throw SynchronousExecution();

    public object Execute(Expression expression) => throw SynchronousExecution();

    public static NotSupportedException SynchronousExecution() => new(
        "Jackdaw queries run asynchronously only: use ToListAsync(), CountAsync(), AnyAsync(), FirstAsync(), FirstOrDefaultAsync(), SingleAsync() or SingleOrDefaultAsync() (JackdawQueryableExtensions) instead of enumerating the query or calling ToList(), Count() or First().");

    public QueryModel Translate(Expression expression) => QueryTranslator.Translate(expression, this, conventions, from);

    public async Task<List<TResult>> ToListAsync<TResult>(Expression expression, CancellationToken token)
    {
        var model = Translate(expression);
        return (await RunAsync<TResult>(model, model.Take, model.Skip, token).ConfigureAwait(false)).Results;
    }

    /// <summary>The number of results, asking the server for none: its total, less the skip, at most the take.</summary>
    public async Task<long> CountAsync(Expression expression, CancellationToken token)
    {
        var model = Translate(expression);
        var total = (await RunAsync<System.Text.Json.JsonElement>(model, 0, 0, token, CountOnly).ConfigureAwait(false)).TotalResults;
        return Count(model, total);
    }

    /// <summary>The query's results once the session's lazy operations have run (one request for all of them).</summary>
    public Lazy<Task<IEnumerable<TResult>>> Lazily<TResult>(Expression expression, CancellationToken token)
    {
        var model = Translate(expression);
        var (request, shape) = Prepare(model, model.Take, model.Skip);
        return session.AddLazyOperation(
            new LazyQueryOperation<TResult, IEnumerable<TResult>>(session, request.ToJson(conventions.SerializerOptions), shape, model.Statistics, result => result.Results),
            token);
    }

    /// <summary>The number of results (as <see cref="CountAsync"/> counts) once the session's lazy operations have run.</summary>
    public Lazy<Task<int>> CountLazily(Expression expression, CancellationToken token)
    {
        var model = Translate(expression);
        var (request, _) = Prepare(model, 0, 0);
        return session.AddLazyOperation(
            new LazyQueryOperation<System.Text.Json.JsonElement, int>(session, request.ToJson(conventions.SerializerOptions), CountOnly, model.Statistics, result => checked((int)Count(model, result.TotalResults))),
            token);
    }

    // Results are not expected when counting; should any come they are read as plain JSON, never tracked.
    private static QueryResultShape CountOnly => new(QueryResultMode.Projection, new Projection());

    private static long Count(QueryModel model, long total)
    {
        var count = Math.Max(0, total - model.Skip);
        return model.Take is { } take ? Math.Min(count, take) : count;
    }

    /// <summary>First and FirstOrDefault ask for one result, Single and SingleOrDefault for two (a second one is the error).</summary>
    public async Task<TResult?> SingleResultAsync<TResult>(Expression expression, SingleResult kind, CancellationToken token)
    {
        var model = Translate(expression);
        long wanted = kind is SingleResult.First or SingleResult.FirstOrDefault ? 1 : 2;
        var results = (await RunAsync<TResult>(model, model.Take is { } take ? Math.Min(take, wanted) : wanted, model.Skip, token).ConfigureAwait(false)).Results;
        if (results.Count > 1 && kind is SingleResult.Single or SingleResult.SingleOrDefault)
        {
            throw new InvalidOperationException($"The query returned more than one result; {kind}Async expects at most one. Query: {model.ToRql()}");
        }

        if (results.Count == 0)
        {
            return kind is SingleResult.First or SingleResult.Single
                ? throw new InvalidOperationException($"The query returned no results; {kind}Async expects one (use {kind}OrDefaultAsync to get null instead). Query: {model.ToRql()}")
                : default;
        }

        return results[0];
    }

    /// <summary>
    /// The request and result shape of a stream of the query: as <see cref="ToListAsync{TResult}"/>
    /// sends it, its documents never tracked (as RavenDB's streams).
    /// </summary>
    public (QueryRequest Request, QueryResultShape Shape) CreateStreamRequest(Expression expression)
    {
        var model = Translate(expression);
        var customization = model.Customization;
        var request = new QueryRequest(model.ToRql(model.Take, model.Skip), model.Parameters.Values, customization.WaitForNonStale, customization.WaitTimeout);
        var shape = model.Projection is { } projection
            ? new QueryResultShape(QueryResultMode.Projection, projection)
            : new QueryResultShape(QueryResultMode.NoTracking, EntityType: documentType);
        return (request, shape);
    }

    private Task<QueryResult<TResult>> RunAsync<TResult>(QueryModel model, long? limit, long offset, CancellationToken token, QueryResultShape? shape = null)
    {
        var (request, defaultShape) = Prepare(model, limit, offset);
        return session.QueryAsync<TResult>(request, shape ?? defaultShape, model.Statistics, token);
    }

    /// <summary>The request for <paramref name="model"/> with this paging, and how its results become objects.</summary>
    private (QueryRequest Request, QueryResultShape Shape) Prepare(QueryModel model, long? limit, long offset)
    {
        var customization = model.Customization;
        var request = new QueryRequest(model.ToRql(limit, offset), model.Parameters.Values, customization.WaitForNonStale, customization.WaitTimeout);
        var shape = model.Projection is { } projection ? new QueryResultShape(QueryResultMode.Projection, projection)
            : customization.IsNoTracking ? new QueryResultShape(QueryResultMode.NoTracking, EntityType: documentType)
            : new QueryResultShape(QueryResultMode.Track, EntityType: documentType);
        return (request, shape);
    }
}
