using System.Linq.Expressions;
using System.Reflection;
using System.Text.Json;
using System.Text.Json.Serialization.Metadata;

namespace Jackdaw.Client.Queries.Linq;

/// <summary>
/// Turns member accesses of a LINQ lambda into document paths, naming each member as the
/// conventions' serializer writes it (its <c>[JsonPropertyName]</c> or naming policy), so a query
/// asks for the fields the stored documents have. The conventions' id property of the queried
/// type is <c>id()</c>. Lambda parameters are bound to where they point: the query's parameter to
/// the document, the parameter of <c>x.Lines.Any(l => ...)</c> to <c>Lines[]</c>.
/// </summary>
internal sealed class FieldPathResolver(DocumentConventions conventions)
{
    private readonly Dictionary<ParameterExpression, FieldPath> _scopes = [];

    public DocumentConventions Conventions => conventions;

    public void Bind(ParameterExpression parameter, FieldPath path) => _scopes[parameter] = path;

    public void Unbind(ParameterExpression parameter) => _scopes.Remove(parameter);

    /// <summary>The path of a member access of a bound parameter; <see cref="NotSupportedException"/> naming <paramref name="context"/> otherwise.</summary>
    public FieldPath Resolve(Expression expression, string context)
    {
        if (TryResolve(expression, out var path) && !path.IsRoot)
        {
            return path;
        }

        throw new NotSupportedException($"{context}: '{expression}' is not a field of the document. Jackdaw queries compare document fields (x.Name, x.ShipTo.City, x.Lines.Any(l => l.Product == ...)) with values computed on the client.");
    }

    public bool TryResolve(Expression expression, out FieldPath path)
    {
        path = FieldPath.Root;
        switch (expression)
        {
            case UnaryExpression { NodeType: ExpressionType.Convert or ExpressionType.ConvertChecked or ExpressionType.TypeAs } unary:
                return TryResolve(unary.Operand, out path);
            case ParameterExpression parameter:
                return _scopes.TryGetValue(parameter, out path!);
            case MemberExpression { Expression: { } instance } member:
                if (!TryResolve(instance, out var parent))
                {
                    return false;
                }

                if (member.Member.Name == "Value" && Nullable.GetUnderlyingType(instance.Type) is not null)
                {
                    path = parent;
                    return true;
                }

                if (parent.IsId)
                {
                    throw new NotSupportedException($"'{expression}': the document id is compared as a whole; members of it cannot be queried.");
                }

                if (parent.IsRoot && IsIdMember(member.Member))
                {
                    path = FieldPath.Id;
                    return true;
                }

                path = parent.Append(JsonName(instance.Type, member.Member));
                return true;
            case MethodCallExpression { Method.Name: "get_Item", Object: { } dictionary, Arguments: [var key] } indexer
                when key.Type == typeof(string) && IsStringDictionary(dictionary.Type) && ExpressionValues.IsEvaluable(key):
                if (!TryResolve(dictionary, out var owner))
                {
                    return false;
                }

                var name = (string?)ExpressionValues.Evaluate(key) ?? throw new NotSupportedException($"'{indexer}': a dictionary key cannot be null.");
                path = owner.Append(conventions.SerializerOptions.DictionaryKeyPolicy?.ConvertName(name) ?? name);
                return true;
            case MethodCallExpression { Method.Name: nameof(Enumerable.Select), Arguments: [var source, var selector] } select
                when select.Method.DeclaringType == typeof(Enumerable) && StripQuote(selector) is LambdaExpression { Parameters.Count: 1 } lambda:
                if (!TryResolve(source, out var array))
                {
                    return false;
                }

                Bind(lambda.Parameters[0], array.AsArray());
                try
                {
                    return TryResolve(lambda.Body, out path);
                }
                finally
                {
                    Unbind(lambda.Parameters[0]);
                }

            default:
                return false;
        }
    }

    /// <summary>The CLR type of the value a field expression reads, under any conversion the compiler added (an enum compared as its number).</summary>
    public static Type FieldType(Expression expression)
    {
        while (expression is UnaryExpression { NodeType: ExpressionType.Convert or ExpressionType.ConvertChecked } unary)
        {
            expression = unary.Operand;
        }

        return Nullable.GetUnderlyingType(expression.Type) ?? expression.Type;
    }

    public static Expression StripQuote(Expression expression) =>
        expression is UnaryExpression { NodeType: ExpressionType.Quote } quote ? quote.Operand : expression;

    /// <summary>The JSON name the serializer gives <paramref name="member"/> of <paramref name="type"/>.</summary>
    public string JsonName(Type type, MemberInfo member)
    {
        JsonTypeInfo info;
        try
        {
            info = conventions.SerializerOptions.GetTypeInfo(type);
        }
        catch (Exception e) when (e is NotSupportedException or InvalidOperationException)
        {
            throw new NotSupportedException($"'{type.Name}.{member.Name}' cannot be queried: {type.Name} cannot be serialized ({e.Message}).", e);
        }

        if (info.Kind != JsonTypeInfoKind.Object)
        {
            throw new NotSupportedException($"'{type.Name}.{member.Name}' cannot be queried: a {type.Name} is stored as a JSON {info.Kind.ToString().ToLowerInvariant()}, which has no fields.");
        }

        foreach (var property in info.Properties)
        {
            if (property.AttributeProvider is MemberInfo candidate && candidate.Name == member.Name && property.Get is not null)
            {
                return property.Name;
            }
        }

        throw new NotSupportedException($"'{type.Name}.{member.Name}' cannot be queried: the serializer does not write it ([JsonIgnore], or not public), so documents have no such field.");
    }

    private bool IsIdMember(MemberInfo member) =>
        member.Name == conventions.IdPropertyName && member switch
        {
            PropertyInfo p => p.PropertyType == typeof(string),
            FieldInfo f => f.FieldType == typeof(string),
            _ => false,
        };

    private static bool IsStringDictionary(Type type) =>
        type.GetInterfaces().Append(type).Any(i => i.IsGenericType
            && (i.GetGenericTypeDefinition() == typeof(IDictionary<,>) || i.GetGenericTypeDefinition() == typeof(IReadOnlyDictionary<,>))
            && i.GetGenericArguments()[0] == typeof(string));
}
