using System.Linq.Expressions;
using System.Reflection;

namespace Jackdaw.Client.Queries.Linq;

/// <summary>
/// Methods that stand in a query's expression tree for Jackdaw's own operators (customize,
/// statistics, include, search), so a query stays an immutable expression like any other LINQ
/// query. <see cref="QueryTranslator"/> reads them; they are never called.
/// </summary>
internal static class QueryMarkers
{
    public static readonly MethodInfo CustomizeMethod = Method(nameof(Customize));
    public static readonly MethodInfo StatisticsMethod = Method(nameof(Statistics));
    public static readonly MethodInfo IncludePathMethod = Method(nameof(IncludePath));
    public static readonly MethodInfo IncludeMemberMethod = Method(nameof(IncludeMember));
    public static readonly MethodInfo SearchMethod = Method(nameof(Search));

    public static IQueryable<T> Customize<T>(IQueryable<T> source, Action<IDocumentQueryCustomization> action) => throw NotCalled();

    public static IQueryable<T> Statistics<T>(IQueryable<T> source, QueryStatistics statistics) => throw NotCalled();

    public static IQueryable<T> IncludePath<T>(IQueryable<T> source, string path) => throw NotCalled();

    public static IQueryable<T> IncludeMember<T>(IQueryable<T> source, LambdaExpression path) => throw NotCalled();

    public static IQueryable<T> Search<T>(IQueryable<T> source, LambdaExpression field, string terms, SearchOperator @operator) => throw NotCalled();

    /// <summary>Appends a call of <paramref name="marker"/> to <paramref name="source"/>'s expression.</summary>
    public static IJackdawQueryable<T> Append<T>(IJackdawQueryable<T> source, MethodInfo marker, params object[] arguments)
    {
        var method = marker.MakeGenericMethod(typeof(T));
        var parameters = method.GetParameters();
        var call = Expression.Call(method, [source.Expression, .. arguments.Select((a, i) => Expression.Constant(a, parameters[i + 1].ParameterType))]);
        return (IJackdawQueryable<T>)source.Provider.CreateQuery<T>(call);
    }

    private static MethodInfo Method(string name) => typeof(QueryMarkers).GetMethod(name, BindingFlags.Public | BindingFlags.Static)!;

    private static InvalidOperationException NotCalled() => new("A query marker is read by the translator, never called.");
}
