using System.Text;
using System.Diagnostics.CodeAnalysis;
using Jackdaw.Storage.Blittable;
using Jint;
using Jint.Native;
using Jint.Native.Object;
using Jint.Runtime;
using Jint.Runtime.Descriptors;

namespace Jackdaw.Server.Indexing.JavaScript;

/// <summary>
/// A JSON object of a stored document as a JavaScript object, read from the blittable bytes on
/// access: a map that reads three properties of a fifty-property order converts three values, and
/// no document is turned into JSON text and parsed again.
/// </summary>
/// <remarks>
/// <para>
/// The blittable readers are ref structs over a span, so this object cannot hold one. It keeps the
/// way to its object instead: the document's slot in the <see cref="MapScope"/> and the path of
/// property and item indices from the root, and walks it again for each property it has not read
/// yet (one table read per step; paths are as deep as the document's nesting). A value once read is
/// kept, so <c>o.Lines === o.Lines</c> and a change made to a nested object or array stays.
/// </para>
/// <para>
/// Reads are the lazy part. The first write, delete or freeze copies every property into Jint's own
/// property storage and from then on the object is an ordinary one (writes are rare in maps; this
/// keeps their semantics Jint's). Properties are listed in stored order, integer-like names
/// included (the order the document was written in, not JavaScript's integers-first order).
/// </para>
/// </remarks>
internal sealed class BlittableObjectInstance : ObjectInstance
{
    private readonly MapScope _scope;
    private readonly int _document;
    private readonly long _generation;
    private readonly int[] _path;
    private JsValue?[]? _values;
    private bool _materialized;

    public BlittableObjectInstance(MapScope scope, int document, int[] path, string? documentId = null, string? collection = null)
        : base(scope.Engine)
    {
        _scope = scope;
        _document = document;
        _generation = scope.Generation;
        _path = path;
        DocumentId = documentId;
        Collection = collection;
        Prototype = scope.Engine.Intrinsics.Object.PrototypeObject;
    }

    /// <summary>The document's id when this is a document's root (given to the map or loaded), else null.</summary>
    public string? DocumentId { get; }

    /// <summary>The document's collection when this is a document's root.</summary>
    public string? Collection { get; }

    public override JsValue Get(JsValue property, JsValue receiver)
    {
        if (!_materialized && TryGetName(property, out var name) && TryGetOwnValue(name, out var value))
        {
            return value;
        }

        return base.Get(property, receiver);
    }

    public override PropertyDescriptor GetOwnProperty(JsValue property)
    {
        if (_materialized || !TryGetName(property, out var name))
        {
            return base.GetOwnProperty(property);
        }

        return TryGetOwnValue(name, out var value)
            ? new PropertyDescriptor(value, PropertyFlag.ConfigurableEnumerableWritable)
            : PropertyDescriptor.Undefined;
    }

    protected override bool TryGetOwnPropertyValue(JsValue property, JsValue receiver, out JsValue value)
    {
        if (_materialized || !TryGetName(property, out var name))
        {
            return base.TryGetOwnPropertyValue(property, receiver, out value);
        }

        return TryGetOwnValue(name, out value);
    }

    protected override bool TryGetProperty(JsValue property, [NotNullWhen(true)] out PropertyDescriptor? descriptor)
    {
        if (_materialized || !TryGetName(property, out var name))
        {
            return base.TryGetProperty(property, out descriptor);
        }

        if (TryGetOwnValue(name, out var value))
        {
            descriptor = new PropertyDescriptor(value, PropertyFlag.ConfigurableEnumerableWritable);
            return true;
        }

        descriptor = PropertyDescriptor.Undefined;
        return false;
    }

    protected override OwnPropertyProbe ProbeOwnProperty(JsValue property)
    {
        if (_materialized || !TryGetName(property, out var name))
        {
            return base.ProbeOwnProperty(property);
        }

        // Existence only: the value is converted when it is read.
        return _scope.IndexOf(Open(), name) >= 0 ? OwnPropertyProbe.Enumerable : OwnPropertyProbe.Missing;
    }

    public override List<JsValue> GetOwnPropertyKeys(Types types = Types.String | Types.Symbol)
    {
        if (_materialized)
        {
            return base.GetOwnPropertyKeys(types);
        }

        // Before the first write the object has string keys only, all in the document.
        var keys = new List<JsValue>();
        if ((types & Types.String) != 0)
        {
            var obj = Open();
            keys.Capacity = obj.Count;
            for (var i = 0; i < obj.Count; i++)
            {
                keys.Add(new JsString(Encoding.UTF8.GetString(obj.GetNameAt(i))));
            }
        }

        return keys;
    }

    public override IEnumerable<KeyValuePair<JsValue, PropertyDescriptor>> GetOwnProperties()
    {
        if (_materialized)
        {
            return base.GetOwnProperties();
        }

        var keys = GetOwnPropertyKeys(Types.String);
        var properties = new List<KeyValuePair<JsValue, PropertyDescriptor>>(keys.Count);
        for (var i = 0; i < keys.Count; i++)
        {
            properties.Add(new(keys[i], new PropertyDescriptor(ValueAt(i), PropertyFlag.ConfigurableEnumerableWritable)));
        }

        return properties;
    }

    public override bool Set(JsValue property, JsValue value, JsValue receiver)
    {
        Materialize();
        return base.Set(property, value, receiver);
    }

    public override bool DefineOwnProperty(JsValue property, PropertyDescriptor desc)
    {
        Materialize();
        return base.DefineOwnProperty(property, desc);
    }

    public override bool Delete(JsValue property)
    {
        Materialize();
        return base.Delete(property);
    }

    public override bool PreventExtensions()
    {
        Materialize();
        return base.PreventExtensions();
    }

    protected override void SetOwnProperty(JsValue property, PropertyDescriptor desc)
    {
        Materialize();
        base.SetOwnProperty(property, desc);
    }

    public override void RemoveOwnProperty(JsValue property)
    {
        Materialize();
        base.RemoveOwnProperty(property);
    }

    /// <summary>A JavaScript property key as a document property name (numbers name properties too: <c>o[0]</c>).</summary>
    private static bool TryGetName(JsValue property, out string name)
    {
        if (property is JsString text)
        {
            name = text.ToString();
            return true;
        }

        if (property.IsNumber())
        {
            name = TypeConverter.ToString(property);
            return true;
        }

        name = string.Empty;
        return false;
    }

    private bool TryGetOwnValue(string name, out JsValue value)
    {
        var obj = Open();
        var index = _scope.IndexOf(obj, name);
        if (index < 0)
        {
            value = Undefined;
            return false;
        }

        _values ??= new JsValue?[obj.Count];
        value = _values[index] ??= FromBlittable(obj.GetValueAt(index), index);
        return true;
    }

    private JsValue ValueAt(int index)
    {
        var obj = Open();
        _values ??= new JsValue?[obj.Count];
        return _values[index] ??= FromBlittable(obj.GetValueAt(index), index);
    }

    /// <summary>Walks the path from the document's root to this object (a TypeError when the call has ended).</summary>
    private BlittableObject Open()
    {
        var root = BlittableReader.Open(_scope.Read(_document, _generation));
        if (_path.Length == 0)
        {
            return root;
        }

        var value = root.GetValueAt(_path[0]);
        for (var i = 1; i < _path.Length; i++)
        {
            value = value.Type == BlittableToken.Object ? value.GetObject().GetValueAt(_path[i]) : value.GetArray()[_path[i]];
        }

        return value.GetObject();
    }

    private JsValue FromBlittable(BlittableValue value, int index) => FromBlittable(_scope, _document, value, _path, index);

    /// <summary>
    /// A stored value as a JavaScript value: integers and doubles as numbers, objects as lazy
    /// objects, arrays as JavaScript arrays at once (their objects stay lazy; an array is usually
    /// iterated whole, and Jint's own arrays keep every array method fast).
    /// </summary>
    private static JsValue FromBlittable(MapScope scope, int document, BlittableValue value, int[] parentPath, int step)
    {
        switch (value.Type)
        {
            case BlittableToken.Null:
                return Null;
            case BlittableToken.True:
                return JsBoolean.True;
            case BlittableToken.False:
                return JsBoolean.False;
            case BlittableToken.Integer:
                value.TryGetInt64(out var integer);
                return JsNumber.Create(integer);
            case BlittableToken.Double:
                return JsNumber.Create(value.TryGetDouble(out var number) ? number : double.NaN);
            case BlittableToken.String:
                return new JsString(value.GetString() ?? string.Empty);
            case BlittableToken.Object:
                return new BlittableObjectInstance(scope, document, Append(parentPath, step));
            default:
                var path = Append(parentPath, step);
                var array = value.GetArray();
                var items = new JsValue[array.Length];
                for (var i = 0; i < items.Length; i++)
                {
                    items[i] = FromBlittable(scope, document, array[i], path, i);
                }

                return new JsArray(scope.Engine, items);
        }
    }

    private static int[] Append(int[] path, int step)
    {
        var longer = new int[path.Length + 1];
        path.CopyTo(longer, 0);
        longer[^1] = step;
        return longer;
    }

    /// <summary>Copies every property into Jint's storage before the first change (see the remarks).</summary>
    private void Materialize()
    {
        if (_materialized)
        {
            return;
        }

        var keys = GetOwnPropertyKeys(Types.String);
        var values = new JsValue[keys.Count];
        for (var i = 0; i < values.Length; i++)
        {
            values[i] = ValueAt(i);
        }

        _materialized = true;
        _values = null;
        for (var i = 0; i < values.Length; i++)
        {
            base.SetOwnProperty(keys[i], new PropertyDescriptor(values[i], PropertyFlag.ConfigurableEnumerableWritable));
        }
    }
}
